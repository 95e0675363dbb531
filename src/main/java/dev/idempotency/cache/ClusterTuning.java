package dev.idempotency.cache;

import java.time.Duration;
import java.util.Objects;

/**
 * How a clustered cache behaves when other members stop answering: the cache only ever saves the store a question, so
 * a member that does not answer costs a request at most {@code timeout}, and then the cache, not the answers.
 *
 * @param timeout          the longest a cache call waits for the other members (Infinispan's remote and lock
 *                         timeouts); past it the cache is bypassed
 * @param retryInterval    how long it is bypassed (the store answers every request, waiters poll it) before it is tried
 *                         again, off the requests' threads; also how long a waiter waits for another node's wake-up
 *                         before it looks at the store
 * @param failureDetection how long a member may stay silent before the built-in JGroups stack suspects it and the
 *                         others go on without it (its heartbeats are sent four times in that time)
 */
public record ClusterTuning(Duration timeout, Duration retryInterval, Duration failureDetection) {

    /** The library's defaults: one second, five seconds, six seconds. */
    public static final ClusterTuning DEFAULT = new ClusterTuning(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(6));

    public ClusterTuning {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(retryInterval, "retryInterval");
        Objects.requireNonNull(failureDetection, "failureDetection");
    }
}
