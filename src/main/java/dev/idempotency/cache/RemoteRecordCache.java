package dev.idempotency.cache;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A cache on an Infinispan Server ({@link RemoteCaches}) that may be unreachable, in front of the store, which alone
 * judges "new": when an operation on it fails or outlasts {@code idempotency.cache.remote.timeout}, it is bypassed for
 * {@code retryInterval} (every read is a miss, the store answers; finished records are not cached; waiters poll the
 * store), then the next caller has it reached again on a thread of its own, never a request's (the library's own
 * Hot Rod client is made anew then, since one connection of it can be left sending nothing). Nothing is lost meanwhile but speed: a key released or deleted while the cache was bypassed is remembered and
 * evicted before the cache answers again (past {@value #MAX_PENDING} such keys, or after a failed flush, the whole
 * cache is emptied instead), so that the cache never outlives its record.
 */
final class RemoteRecordCache implements ManagedRecordCache {

    private static final Logger LOG = Logger.getLogger(RemoteRecordCache.class.getName());
    static final int MAX_PENDING = 10_000;

    /** A reached cache and what lets it go (its listener; the library's own client, stopped). */
    record Connection(InfinispanRecordCache records, Runnable close) {
        void closeQuietly() {
            try {
                close.run();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not let go of a connection to the cache", e);
            }
        }
    }

    private final Supplier<Connection> connect;
    private final long retryNanos;
    private final Duration waitPoll;
    private final String description;
    /** Connects again and registers listeners again, off the requests' threads. */
    private final ExecutorService background;
    /** The cache, once reached (a server unreachable at deployment leaves it {@code null} until it answers). */
    private volatile Connection connection;
    private volatile InfinispanRecordCache records;
    /** 0: in use; otherwise the {@link System#nanoTime()} after which the next caller tries it again. */
    private volatile long bypassedUntil;
    private final AtomicBoolean trying = new AtomicBoolean();
    /** Keys released or deleted while bypassed: evicted before the cache answers again. */
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean clearPending;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicLong failures = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong reconnections = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param connect reaches the cache (creating it when configured to) and starts its listener, each of its calls
     *                bounded in time; throws when the servers cannot be reached
     */
    RemoteRecordCache(Supplier<Connection> connect, Duration retryInterval, Duration waitPoll, String description) {
        this.connect = connect;
        this.retryNanos = retryInterval.toNanos();
        this.waitPoll = waitPoll;
        this.description = description;
        this.background = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "idempotency-remote-cache");
            t.setDaemon(true);
            return t;
        });
    }

    /** Reaches the cache now; when that fails, the first request after {@code retryInterval} has it tried again. */
    RemoteRecordCache start() {
        try {
            use(connect.get());
        } catch (dev.idempotency.IdempotencyConfigurationException e) {
            background.shutdownNow();
            throw e;
        } catch (RuntimeException e) {
            bypass(e);
        }
        return this;
    }

    private void use(Connection c) {
        connection = c;
        records = c.records();
    }

    @Override
    public Optional<IdempotencyRecord> get(ScopedKey key) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return Optional.empty();
        }
        try {
            return r.get(key);
        } catch (RuntimeException e) {
            bypass(e);
            return Optional.empty();
        }
    }

    @Override
    public void put(IdempotencyRecord finished) {
        put(finished, null);
    }

    @Override
    public void put(IdempotencyRecord finished, Duration atMost) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return;
        }
        try {
            r.put(finished, atMost);
        } catch (RuntimeException e) {
            bypass(e);
        }
    }

    @Override
    public void putLoaded(IdempotencyRecord finished) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return;
        }
        try {
            r.putLoaded(finished);
        } catch (RuntimeException e) {
            bypass(e);
        }
    }

    /** The marker on the servers; while the cache is bypassed, none (the store alone holds duplicates off). */
    @Override
    public boolean mark(ScopedKey key, String holder, Duration atMost) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return true;
        }
        try {
            return r.mark(key, holder, atMost);
        } catch (RuntimeException e) {
            bypass(e);
            return true;
        }
    }

    @Override
    public void unmark(ScopedKey key, String holder) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return; // it expires on its own
        }
        try {
            r.unmark(key, holder);
        } catch (RuntimeException e) {
            bypass(e);
        }
    }

    @Override
    public void evict(ScopedKey key) {
        String id = key.cacheId();
        InfinispanRecordCache r = usable();
        if (r != null) {
            try {
                r.evict(id);
                return;
            } catch (RuntimeException e) {
                bypass(e);
            }
        }
        if (pending.size() < MAX_PENDING) {
            pending.add(id);
        } else {
            clearPending = true;
        }
        if (bypassedUntil == 0) {
            // Back in use while this key was being remembered: evict what is remembered now.
            InfinispanRecordCache back = usable();
            if (back != null) {
                try {
                    catchUp(back);
                } catch (RuntimeException e) {
                    bypass(e);
                }
            }
        }
    }

    @Override
    public void clear() {
        InfinispanRecordCache r = usable();
        if (r != null) {
            try {
                r.clear();
                return;
            } catch (RuntimeException e) {
                bypass(e);
            }
        }
        clearPending = true;
    }

    /**
     * The cache if it is in use; else {@code null}, and the first caller after the retry interval has it reached again
     * in the background (a request never waits for a server that may not answer).
     */
    private InfinispanRecordCache usable() {
        InfinispanRecordCache r = records;
        if (bypassedUntil == 0 && r != null) {
            return r;
        }
        if (System.nanoTime() - bypassedUntil >= 0 && !closed && trying.compareAndSet(false, true)) {
            try {
                background.execute(this::reconnect);
            } catch (RejectedExecutionException e) {
                trying.set(false);
            }
        }
        return null;
    }

    /**
     * Reaches the cache anew (the library's own client made anew; the listener registered again: events in between
     * are lost, so every waiter of this node looks again), evicts what was remembered, and puts it back in use.
     */
    private void reconnect() {
        try {
            Connection old = connection;
            if (old != null) {
                old.closeQuietly();
            }
            Connection c = connect.get();
            if (closed) {
                c.closeQuietly();
                return;
            }
            InfinispanRecordCache r = c.records();
            catchUp(r);
            use(c);
            bypassedUntil = 0;
            catchUp(r); // what was remembered while this thread was catching up
            reconnections.incrementAndGet();
            r.missedEvents();
            LOG.log(Level.INFO, "The cache {0} answers again, after {1} failed operations; it is in use",
                    new Object[] {description, failures.getAndSet(0)});
        } catch (RuntimeException e) {
            bypass(e);
        } finally {
            trying.set(false);
        }
    }

    /** Evicts the keys released or deleted while the cache was bypassed (or empties it). */
    private void catchUp(InfinispanRecordCache r) {
        if (clearPending) {
            clearPending = false;
            pending.clear();
            try {
                r.clear();
            } catch (RuntimeException e) {
                clearPending = true;
                throw e;
            }
            return;
        }
        for (String id : Set.copyOf(pending)) {
            r.evict(id);
            pending.remove(id);
        }
    }

    private void bypass(RuntimeException e) {
        boolean wasInUse = bypassedUntil == 0;
        long until = System.nanoTime() + retryNanos;
        bypassedUntil = until == 0 ? 1 : until;
        failures.incrementAndGet();
        if (wasInUse) {
            LOG.log(Level.WARNING, "The cache " + description + " failed (" + e + "); the store answers every request (slower, "
                    + "still exactly once) and waiters poll it, until the cache answers again (tried every "
                    + Duration.ofNanos(retryNanos) + ")", LOG.isLoggable(Level.FINE) ? e : null);
        } else if (LOG.isLoggable(Level.FINE)) {
            LOG.log(Level.FINE, "The cache " + description + " still fails", e);
        }
    }

    @Override
    public boolean reachable() {
        return bypassedUntil == 0 && records != null;
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
                                + "registering it again (waiters poll the store meanwhile)", new Object[] {description, InfinispanRecordCache.SILENCE});
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

    /** How often a waiter looks at the store while this cache cannot wake it. */
    static final Duration UNHEARD = Duration.ofSeconds(1);

    private volatile long nextRelisten = System.nanoTime();

    @Override
    public long listenerRenewals() {
        InfinispanRecordCache r = records;
        return r == null ? 0 : r.listenerRenewals();
    }

    /** Keys released or deleted while the cache was bypassed, still to be evicted (for tests and operations). */
    int pendingEvictions() {
        return pending.size();
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public int members() {
        return -1;
    }

    @Override
    public int size() {
        InfinispanRecordCache r = usable();
        return r == null ? 0 : r.size();
    }

    /** False while the cache is bypassed. */
    @Override
    public boolean holds(ScopedKey key) {
        InfinispanRecordCache r = usable();
        return r != null && r.holds(key);
    }

    /** How many times the cache was reached again after a failure, for tests and operations. */
    long reconnections() {
        return reconnections.get();
    }

    @Override
    public void close() {
        closed = true;
        background.shutdownNow();
        Connection c = connection;
        if (c != null) {
            c.closeQuietly();
        }
    }
}
