package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The loop every atomic claim runs: the cache first; then, when no other call on this node is claiming or
 * holding the key, one attempt by the caller that leads here; then, when another transaction holds the key, a retry, a
 * wait that holds no transaction and no connection, or the in-progress answer.
 */
final class AtomicClaimLoop {

    private static final Duration MIN_POLL = Duration.ofMillis(50);
    private static final Duration MAX_POLL = Duration.ofMillis(200);

    private final CompletionSignals signals;
    private final QuietCache cache;
    private final Replies replies;
    private final TransactionKeys keys;
    private final Completions completions;
    /** Throws when atomic claims cannot work here. */
    private final Runnable supported;
    /** Keys claimed atomically by this node in transactions that have not completed: a duplicate here needs no SQL. */
    private final ConcurrentHashMap<String, LocalClaim> heldHere = new ConcurrentHashMap<>();

    AtomicClaimLoop(CompletionSignals signals, QuietCache cache, Replies replies, TransactionKeys keys, Completions completions,
                    Runnable supported) {
        this.signals = signals;
        this.cache = cache;
        this.replies = replies;
        this.keys = keys;
        this.completions = completions;
        this.supported = supported;
    }

    /** The key's claim by this node ended with its transaction: callers here no longer wait on it. */
    void forget(String cacheId, LocalClaim mine) {
        heldHere.remove(cacheId, mine);
    }

    /** One attempt of an atomic claim, by the caller that leads on this node: a step, inside a transaction. */
    @FunctionalInterface
    interface Leader<T> {
        Step<T> attempt(Duration lockWait, long started, LocalClaim mine) throws Exception;
    }

    /**
     * The loop of every atomic claim: the cache first; then, when no other call on this node is claiming or
     * holding the key, one attempt; then, when another transaction holds it, a retry, a wait without a
     * transaction or a connection, or the in-progress answer.
     */
    <T> T run(ScopedKey key, String fingerprint, Policy policy, boolean joined,
                             java.util.function.Function<IdempotencyRecord, T> replay, Leader<T> leader) throws Exception {
        supported.run();
        if (joined) {
            keys.checkNotClaimed(key);
        }
        long started = System.nanoTime();
        long deadline = started + policy.waitTimeout().toNanos();
        // Waiting for another caller on this node to learn whether it claimed is bounded like a claim statement.
        long decisionDeadline = started + policy.claimLockTimeout().toNanos() + MIN_POLL.toNanos();
        String id = key.cacheId();
        int settledRetries = 0;
        int passes = 0;
        while (true) {
            IdempotencyRecord cached = cache.finished(key);
            if (cached != null) {
                return replay.apply(replies.replay(key, cached, fingerprint, started, true).record());
            }
            // Subscribed before anything is read, so that no wake-up in between is missed.
            CompletionSignals.Subscription subscription = signals.subscribe(key);
            try {
                Duration retryAfter = Replies.MIN_RETRY_AFTER;
                LocalClaim mine = new LocalClaim(passes++ > 0);
                LocalClaim other = heldHere.putIfAbsent(id, mine);
                if (other != null) {
                    // Another call on this node claims the key, or holds it: no SQL, no connection.
                    long now = System.nanoTime();
                    if (!other.acquired && now < decisionDeadline) {
                        SignalWait.await(subscription, Durations.min(Duration.ofNanos(decisionDeadline - now), MAX_POLL), key);
                        continue;
                    }
                } else {
                    Step<T> step;
                    try {
                        long waitLeft = Math.max(0, deadline - System.nanoTime());
                        Duration lockWait = !policy.waitForResult() ? policy.claimLockTimeout()
                                : joined ? Duration.ofNanos(waitLeft) : Durations.min(policy.claimLockTimeout(), Duration.ofNanos(waitLeft));
                        step = leader.attempt(lockWait, started, mine);
                    } finally {
                        if (!mine.acquired) {
                            heldHere.remove(id, mine);
                            completions.changed(key); // callers here waiting for this claim's answer
                        }
                    }
                    if (step instanceof Step.Done<T> finished) {
                        return finished.value();
                    }
                    if (step instanceof Step.Replayed<T> replayed) {
                        return replay.apply(replayed.record());
                    }
                    Step.Blocked<T> blocked = (Step.Blocked<T>) step;
                    if (blocked.settled() && !joined && settledRetries++ < 3) {
                        continue; // the other transaction committed: a new one finds its row
                    }
                    retryAfter = blocked.retryAfter();
                    if (joined && !blocked.untouched()) {
                        // The caller's transaction may be broken by the failed statement, and cannot be retried here.
                        throw replies.rejected(key, retryAfter);
                    }
                }
                long waitLeft = deadline - System.nanoTime();
                if (!policy.waitForResult() || waitLeft <= 0) {
                    throw replies.rejected(key, retryAfter);
                }
                // No transaction and no connection held: woken by the first call's commit or rollback on this node,
                // by its completion on any node (the cache), or after a poll interval (a rollback elsewhere).
                SignalWait.await(subscription, Durations.min(Duration.ofNanos(waitLeft), Durations.max(policy.claimLockTimeout(), MIN_POLL)), key);
            } finally {
                subscription.close();
            }
        }
    }

    /** A key this node claims (or holds, once {@code acquired}) in a transaction that has not completed. */
    static final class LocalClaim {
        volatile boolean acquired;
        /** Whether the call has been round the loop before (it waited, or its attempt was blocked). */
        final boolean again;

        LocalClaim(boolean again) {
            this.again = again;
        }
    }

    /** What one atomic attempt came to. */
    sealed interface Step<T> {
        /** The answer of the whole call. */
        record Done<T>(T value) implements Step<T> {
        }

        /** A finished record: to be replayed (turned into the caller's answer by the loop's replay function). */
        record Replayed<T>(IdempotencyRecord record) implements Step<T> {
        }

        /** Claimed in the transaction: the caller now runs the operation. */
        record Claimed<T>(AtomicHold hold) implements Step<T> {
        }

        /**
         * Another transaction holds the key; {@code settled}: it has committed, a new transaction sees it;
         * {@code untouched}: this attempt sent nothing to the store (another call's marker held it off), so a caller's
         * transaction may wait on.
         */
        record Blocked<T>(boolean settled, Duration retryAfter, boolean untouched) implements Step<T> {
            Blocked(boolean settled, Duration retryAfter) {
                this(settled, retryAfter, false);
            }
        }
    }
}
