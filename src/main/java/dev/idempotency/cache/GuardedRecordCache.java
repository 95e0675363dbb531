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
 * A cache shared with other processes that may stop answering (an Infinispan Server, {@link RemoteRecordCache}; the
 * other members of a cluster, {@link ClusterRecordCache}), in front of the store, which alone judges "new": when an
 * operation on it fails or outlasts its bound, it is bypassed for {@code retryInterval} (every read is a miss, the store
 * answers; finished records are not cached; waiters poll the store), then the next caller has it reached again on a
 * thread of its own, never a request's. Nothing is lost meanwhile but speed: a key released or deleted while the cache
 * was bypassed is remembered and evicted before the cache answers again (past {@value #MAX_PENDING} such keys, or after
 * a failed flush, the whole cache is emptied instead), so that the cache never outlives its record.
 *
 * <p>Over 400 lines on purpose: the bypass is one state machine under one lock (answering, bypassed, the keys to evict
 * before answering again, the flush, the reconnection on a thread of its own); split, its invariants would span
 * rooms.
 */
abstract class GuardedRecordCache implements ManagedRecordCache {

    private static final Logger LOG = Logger.getLogger(GuardedRecordCache.class.getName());
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
    final long retryNanos;
    final Duration waitPoll;
    private final String description;
    /** Connects again and registers listeners again, off the requests' threads. */
    final ExecutorService background;
    /** Has the cache tried again after each bypass, whether or not a request comes. */
    private final java.util.concurrent.ScheduledExecutorService retries;
    /** The cache, once reached (a server unreachable at deployment leaves it {@code null} until it answers). */
    private volatile Connection connection;
    volatile InfinispanRecordCache records;
    /** 0: in use; otherwise the {@link System#nanoTime()} after which the next caller tries it again. */
    private volatile long bypassedUntil;
    final AtomicBoolean trying = new AtomicBoolean();
    /** Keys released or deleted while bypassed: evicted before the cache answers again. */
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean clearPending;
    volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicLong failures = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong reconnections = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param connect reaches the cache (creating it when configured to, starting its listener, or proving that its
     *                members answer), each of its calls bounded in time; throws when the cache cannot be reached
     * @param thread  the name of the thread that reaches it again
     */
    GuardedRecordCache(Supplier<Connection> connect, Duration retryInterval, Duration waitPoll, String description, String thread) {
        this.connect = connect;
        this.retryNanos = retryInterval.toNanos();
        this.waitPoll = waitPoll;
        this.description = description;
        this.background = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, thread);
            t.setDaemon(true);
            return t;
        });
        java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, thread + "-retry");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.retries = timer;
    }

    /** Reaches the cache now; when that fails, the first request after {@code retryInterval} has it tried again. */
    GuardedRecordCache start() {
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
        later(() -> write(finished.scopedKey().cacheId(), r -> r.put(finished, atMost)));
    }

    @Override
    public void putLoaded(IdempotencyRecord finished) {
        putLoaded(finished, null);
    }

    @Override
    public void putLoaded(IdempotencyRecord finished, java.time.Instant readStarted) {
        later(() -> write(finished.scopedKey().cacheId(), r -> r.putLoaded(finished, readStarted)));
    }

    /**
     * Runs a write that nothing waits for: here, on the caller's thread ({@link ClusterRecordCache}: on a writer thread
     * of its own, in order).
     *
     * @return whether it was taken (a writer whose queue is full drops it)
     */
    boolean later(Runnable write) {
        write.run();
        return true;
    }

    /** One write on the cache in use; none while it is bypassed; a failure bypasses it. */
    final void write(java.util.function.Consumer<InfinispanRecordCache> write) {
        write(null, write);
    }

    /**
     * As {@link #write(java.util.function.Consumer)}, for a write of a key's record: one that fails may have landed
     * before the failure (its write, then the check that undoes it after a clear), so the key is remembered, and evicted
     * before the cache is used again.
     */
    private void write(String id, java.util.function.Consumer<InfinispanRecordCache> write) {
        InfinispanRecordCache r = usable();
        if (r == null) {
            return;
        }
        try {
            write.accept(r);
        } catch (RuntimeException e) {
            if (id != null) {
                remember(id);
            }
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

    /** While the cache is bypassed, nothing: the marker expires on its own. */
    @Override
    public void unmark(ScopedKey key, String holder) {
        later(() -> write(r -> r.unmark(key, holder)));
    }

    /**
     * A released or deleted key: its tombstone is written before this returns (after every write this node queued
     * before it), so that a retry after a deletion is never answered from the cache; while the cache is bypassed, or
     * when the write does not finish in time, the key is remembered and evicted before the cache is used again.
     */
    @Override
    public void evict(ScopedKey key) {
        String id = key.cacheId();
        if (!now(() -> evictNow(id))) {
            remember(id);
            bypass(new java.util.concurrent.RejectedExecutionException("the cache's writes did not finish in time"));
        }
    }

    /**
     * A record the store is about to delete: its tombstone is written, on every node, before this returns; when the cache
     * is bypassed or the write fails or does not finish in time, the deletion of it is refused (deleted unseen, it would
     * go on being answered by the other nodes, which still hold it, until this node reaches the cache again, or for its
     * whole life if this node stopped first). The key is remembered either way, and evicted again before this node
     * uses the cache again.
     */
    @Override
    public void removeBeforeDeleting(ScopedKey key) {
        String id = key.cacheId();
        AtomicBoolean written = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<RuntimeException> failure = new java.util.concurrent.atomic.AtomicReference<>();
        boolean done = now(() -> {
            InfinispanRecordCache r = usable();
            if (r == null) {
                return;
            }
            try {
                r.evict(id);
                written.set(true);
            } catch (RuntimeException e) {
                failure.set(e);
                bypass(e);
            }
        });
        if (done && written.get()) {
            return;
        }
        remember(id);
        if (!done) {
            bypass(new java.util.concurrent.RejectedExecutionException("the cache's writes did not finish in time"));
        }
        throw new dev.idempotency.IdempotencyCacheException("The " + key + " was not deleted: the cache " + description
                + (done && failure.get() == null ? " is bypassed (it failed, and is tried again every few seconds)"
                : done ? " failed (" + failure.get() + ")" : " did not take its tombstone in time")
                + ", and another node could go on answering the record from its copy. Delete it again once the cache answers",
                failure.get());
    }

    /**
     * Runs a write after every write queued before it, and waits for it ({@link ClusterRecordCache}: on its writer,
     * for at most about its timeout); here, on the caller's thread.
     *
     * @return whether it was done
     */
    boolean now(Runnable write) {
        write.run();
        return true;
    }

    /**
     * As {@link #now(Runnable)}, waiting up to {@code atMost} for a write that may take long (a clear removes every
     * entry, one by one).
     */
    boolean nowFor(Runnable write, Duration atMost) {
        return now(write);
    }

    /**
     * The longest a clear is waited for (about a second per 10,000 entries on a replicated cache of two nodes): past it
     * this node bypasses the cache, and empties it again before it answers.
     */
    static final Duration CLEAR_WAIT = Duration.ofSeconds(InfinispanRecordCache.TOMBSTONE_LIFESPAN_SECONDS / 2);

    private void remember(String id) {
        if (pending.size() < MAX_PENDING) {
            pending.add(id);
        } else {
            clearPending = true;
        }
    }

    private void evictNow(String id) {
        InfinispanRecordCache r = usable();
        if (r != null) {
            try {
                r.evict(id);
                return;
            } catch (RuntimeException e) {
                bypass(e);
            }
        }
        remember(id);
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
        if (!nowFor(this::clearNow, CLEAR_WAIT)) {
            clearPending = true;
            bypass(new java.util.concurrent.RejectedExecutionException("the cache's writes did not finish in time"));
        }
    }

    private void clearNow() {
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
    final InfinispanRecordCache usable() {
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

    final void bypass(RuntimeException e) {
        boolean wasInUse = bypassedUntil == 0;
        long until = System.nanoTime() + retryNanos;
        bypassedUntil = until == 0 ? 1 : until;
        if (!closed) {
            // Tried again after the interval even when no request comes: keys remembered meanwhile are then evicted on
            // every node without waiting for this node's next caller.
            try {
                retries.schedule(() -> {
                    usable();
                }, retryNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException stopping) {
                // closed meanwhile
            }
        }
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

    @Override
    public long listenerRenewals() {
        InfinispanRecordCache r = records;
        return r == null ? 0 : r.listenerRenewals();
    }

    /** How often a waiter looks at the store while this cache cannot wake it. */
    static final Duration UNHEARD = Duration.ofSeconds(1);

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

    /** How many operations failed since it was last reached again, for tests and operations. */
    long failures() {
        return failures.get();
    }

    @Override
    public void close() {
        closed = true;
        retries.shutdownNow();
        InfinispanRecordCache r = records;
        if (r != null && (clearPending || !pending.isEmpty())) {
            // Evictions still remembered: applied now if the cache answers, else said (the others may replay those keys
            // until their entries expire).
            try {
                catchUp(r);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "The cache " + description + " is stopped with " + pending.size() + " evictions not "
                        + "applied" + (clearPending ? " and a flush" : "") + " (" + e + "); nodes that share it answer those keys from it "
                        + "until their entries expire", LOG.isLoggable(Level.FINE) ? e : null);
            }
        }
        background.shutdownNow();
        Connection c = connection;
        if (c != null) {
            c.closeQuietly();
        }
    }
}
