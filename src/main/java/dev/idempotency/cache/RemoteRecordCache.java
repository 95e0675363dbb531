package dev.idempotency.cache;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A cache on an Infinispan Server ({@link RemoteCaches}) that may be unreachable: an operation that fails or outlasts
 * {@code idempotency.cache.remote.timeout} has it bypassed for {@code idempotency.cache.remote.retry-interval}
 * ({@link GuardedRecordCache}); reached again, the library's own Hot Rod client is made anew, since one connection of it
 * can be left sending nothing, and its listener registered again.
 */
final class RemoteRecordCache extends GuardedRecordCache {

    private static final Logger LOG = Logger.getLogger(RemoteRecordCache.class.getName());

    RemoteRecordCache(Supplier<Connection> connect, Duration retryInterval, Duration waitPoll, String description) {
        super(connect, retryInterval, waitPoll, description, "idempotency-remote-cache");
    }

    @Override
    RemoteRecordCache start() {
        super.start();
        return this;
    }

    /**
     * A completion whose write to the servers failed wakes nobody elsewhere: a waiter looks at the store itself after
     * {@code wait-poll}. While the cache is bypassed its events do not arrive at all, nor while its listener is silent
     * after a write of this node's (the client drops a listener whose move to another server failed): waiters then
     * look every second. A silent listener is registered anew, once a retry interval, by the waiter that finds it so.
     */
    @Override
    public Duration lookAgainAfter() {
        InfinispanRecordCache r = records;
        if (!reachable() || r == null) {
            return UNHEARD;
        }
        if (!r.listenerSilent()) {
            return waitPoll;
        }
        long now = System.nanoTime();
        if (now - nextRelisten >= 0 && !closed && trying.compareAndSet(false, true)) {
            nextRelisten = now + retryNanos;
            try {
                background.execute(() -> {
                    try {
                        LOG.log(Level.WARNING, "The cache {0}''s listener heard nothing of this node''s last write for {1}: "
                                + "registering it again (waiters poll the store meanwhile)", new Object[] {description(), InfinispanRecordCache.SILENCE});
                        r.listenAgain();
                    } catch (RuntimeException e) {
                        bypass(e);
                    } finally {
                        trying.set(false);
                    }
                });
            } catch (RejectedExecutionException e) {
                trying.set(false);
            }
        }
        return UNHEARD;
    }

    private volatile long nextRelisten = System.nanoTime();

    @Override
    public int members() {
        return -1;
    }
}
