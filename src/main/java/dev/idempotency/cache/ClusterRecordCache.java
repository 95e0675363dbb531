package dev.idempotency.cache;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A clustered embedded cache (replicated or distributed) whose other members may stop answering: a partition, a node
 * paused or cut off. Its calls wait at most {@link ClusterTuning#timeout()} for them (Infinispan's remote and lock
 * timeouts, {@link CacheManagers#defineCache}); one that fails has the cache bypassed for
 * {@link ClusterTuning#retryInterval()} ({@link GuardedRecordCache}); it is taken back into use once a probe that every
 * member in this node's view must take succeeds, on a thread of its own: after the partition healed, or once failure
 * detection has split the view and this node's side answers on its own.
 *
 * <p>Writes that nothing waits for leave the request's thread, in order, on one writer thread of this cache's (at most
 * {@value #MAX_QUEUED} queued; past that they are dropped, an eviction remembered as while bypassed). It is safe because
 * the store judges every key and holds the record before the cache is written:
 * <ul>
 * <li>a completion's record ({@code put}): until it lands, a duplicate misses the cache and the store replays the same
 *     record; this node's waiters are woken by the completion itself, other nodes' by the entry when it lands, or by
 *     looking at the store after {@link #lookAgainAfter()};</li>
 * <li>a record read from the store ({@code putLoaded}): a put-if-absent that a release or a deletion's tombstone, written
 *     before it or after it on this writer, still stops;</li>
 * <li>a released or deleted key's tombstone ({@code evict}), and a flush ({@code clear}): written after every earlier write
 *     of this node's (one writer, in order), so that no record of it is put back after it, and waited for (about the
 *     timeout at most), so that a retry after a deletion is never answered from the cache; when the wait is over first,
 *     the key is remembered as while bypassed;</li>
 * <li>a running marker's removal ({@code unmark}): a marker is a courtesy that expires on its own.</li>
 * </ul>
 * The optimistic claim's marker itself ({@code mark}) is asked on the request's thread: its answer matters (a marker
 * another call holds keeps this duplicate from running its work); it waits at most the timeout, and a cache that fails
 * marks nothing (the store holds duplicates off alone). Reads are local in a replicated cache.
 */
public final class ClusterRecordCache extends GuardedRecordCache {

    private static final Logger LOG = Logger.getLogger(ClusterRecordCache.class.getName());
    static final int MAX_QUEUED = 10_000;

    private final InfinispanRecordCache cluster;
    private final ThreadPoolExecutor writer;
    private final AtomicLong dropped = new AtomicLong();
    private final long timeoutMillis;

    private ClusterRecordCache(InfinispanRecordCache cluster, ClusterTuning tuning) {
        super(() -> {
            cluster.probe();
            return new Connection(cluster, () -> { }); // the same cache, its listener left as it is
        }, tuning.retryInterval(), tuning.retryInterval(), cluster.description(), "idempotency-cluster-cache");
        this.cluster = cluster;
        this.timeoutMillis = Math.max(1, tuning.timeout().toMillis());
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(MAX_QUEUED), r -> {
            Thread t = new Thread(r, "idempotency-cluster-cache-writer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Guards a clustered cache and proves that its members answer (when they do not, it starts bypassed).
     *
     * @param cluster a clustered {@link InfinispanRecordCache}, whose cache has the tuning's timeouts
     */
    public static ClusterRecordCache start(InfinispanRecordCache cluster, ClusterTuning tuning) {
        ClusterRecordCache guarded = new ClusterRecordCache(cluster, tuning);
        guarded.start();
        return guarded;
    }

    /**
     * A write that waited this long in the queue is dropped rather than made (a miss costs a store read): a record put
     * now could outlive the tombstone (60 s) of a deletion made while it waited.
     */
    static final long STALE_NANOS = TimeUnit.SECONDS.toNanos(InfinispanRecordCache.TOMBSTONE_LIFESPAN_SECONDS / 2);

    @Override
    boolean later(Runnable write) {
        long queued = System.nanoTime();
        try {
            writer.execute(() -> {
                if (System.nanoTime() - queued > STALE_NANOS) {
                    long n = dropped.incrementAndGet();
                    LOG.log(n == 1 ? Level.WARNING : Level.FINE, "A cluster cache write waited more than {0} s and was dropped "
                            + "({1} dropped so far): duplicates of those keys ask the store", new Object[] {STALE_NANOS / 1_000_000_000L, n});
                    return;
                }
                write.run();
            });
            return true;
        } catch (RejectedExecutionException e) {
            long n = dropped.incrementAndGet();
            LOG.log(n == 1 ? Level.WARNING : Level.FINE, "The cluster cache''s writes are queued up ({0} dropped so far): "
                    + "duplicates of those keys ask the store", n);
            return false;
        }
    }

    @Override
    boolean now(Runnable write) {
        return nowFor(write, Duration.ofMillis(2 * timeoutMillis + 100));
    }

    @Override
    boolean nowFor(Runnable write, Duration atMost) {
        java.util.concurrent.Future<?> done;
        try {
            done = writer.submit(write);
        } catch (RejectedExecutionException e) {
            return false;
        }
        try {
            // The writes before it fail fast once one failed (the cache is then bypassed), so this is about the timeout.
            done.get(atMost.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Waits until the writes this node queued so far are done (tests, and a node that stops).
     *
     * @return whether they were done within {@code atMost}
     */
    public boolean awaitWrites(Duration atMost) {
        try {
            writer.submit(() -> { }).get(atMost.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * A completion on another node wakes this node's waiters through the cache, unless its write failed (a member that
     * stopped answering): so a waiter looks at the store itself after the retry interval, every second while bypassed.
     */
    @Override
    public Duration lookAgainAfter() {
        return reachable() ? waitPoll : UNHEARD;
    }

    /** The embedded cache. */
    public org.infinispan.Cache<String, byte[]> cache() {
        return cluster.cache();
    }

    @Override
    public int members() {
        return cluster.members();
    }

    /** Writes dropped because the writer's queue was full, for tests and operations. */
    long droppedWrites() {
        return dropped.get();
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            if (!writer.awaitTermination(Duration.ofNanos(retryNanos).toMillis(), TimeUnit.MILLISECONDS)) {
                writer.shutdownNow();
            }
        } catch (InterruptedException e) {
            writer.shutdownNow();
            Thread.currentThread().interrupt();
        }
        super.close();
        cluster.close();
    }
}
