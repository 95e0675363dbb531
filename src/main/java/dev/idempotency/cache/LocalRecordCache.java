package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The library's own cache of this JVM alone ({@code idempotency.cache.mode=local}, the default): finished records under
 * their {@link ScopedKey} itself (a duplicate's read builds and hashes no key text) in a bounded Caffeine cache (the one
 * Infinispan itself keeps its bounded entries in), each until its record expires, the least used going first beyond
 * {@code idempotency.cache.max-entries}, and for at most {@code idempotency.cache.local-max-age}: with several nodes,
 * each with a cache of its own, a record another node deleted (an operator's deletion, a purge) is read again from the
 * store after that long, never replayed here for the rest of its life.
 *
 * <p>Nothing outside this JVM reads or writes it, so it holds the records as they are: no encoding, no MAC, no copy,
 * and none of a clustered cache's machinery (its interceptors, per-key locks, events) on a first request's write or a
 * duplicate's read. A write wakes this node's waiters of its key, as an Infinispan cache's listener does.
 *
 * <p>As {@link InfinispanRecordCache} does, a released or deleted key leaves a <em>tombstone</em> for
 * {@value InfinispanRecordCache#TOMBSTONE_LIFESPAN_SECONDS} s, which a record read from the store before the release
 * ({@link #putLoaded}) does not replace: the cache never outlives its record. A completion ({@link #put}) replaces it.
 */
public final class LocalRecordCache implements ManagedRecordCache {

    private static final long TOMBSTONE_NANOS = TimeUnit.SECONDS.toNanos(InfinispanRecordCache.TOMBSTONE_LIFESPAN_SECONDS);

    /** An entry and how long it lives from its write. */
    private sealed interface Entry permits Held, Tombstone {
        long lifeNanos();
    }

    private record Held(IdempotencyRecord record, long lifeNanos) implements Entry {
    }

    private record Tombstone(long lifeNanos) implements Entry {
    }

    private final Cache<ScopedKey, Entry> entries;
    private final Clock clock;
    /** When the cache was last emptied ({@link #clear}), by its clock's epoch milliseconds. */
    private volatile long clearedAt = Long.MIN_VALUE;
    private final LocalCompletionSignals signals;
    private final long maxEntries;
    private final long maxAgeNanos;

    /**
     * @param maxEntries the most entries held; beyond it the least used go first
     * @param clock      the clock records' expiries are read against
     * @param signals    this node's waiters, woken by each write of their key
     */
    public LocalRecordCache(long maxEntries, Clock clock, LocalCompletionSignals signals) {
        this(maxEntries, null, clock, signals, Ticker.systemTicker());
    }

    /**
     * @param maxEntries the most entries held; beyond it the least used go first
     * @param maxAge     the longest a record is held, from its write ({@code idempotency.cache.local-max-age}): with
     *                   several nodes, each with a cache of its own, how long another node's deletion of a record may
     *                   go unseen here; {@code null}: until the record expires
     * @param clock      the clock records' expiries are read against
     * @param signals    this node's waiters, woken by each write of their key
     */
    public LocalRecordCache(long maxEntries, Duration maxAge, Clock clock, LocalCompletionSignals signals) {
        this(maxEntries, maxAge, clock, signals, Ticker.systemTicker());
    }

    /** @param ticker the time entries live by (a test's, moved by hand) */
    LocalRecordCache(long maxEntries, Duration maxAge, Clock clock, LocalCompletionSignals signals, Ticker ticker) {
        this.clock = clock;
        this.signals = signals;
        this.maxEntries = maxEntries;
        this.maxAgeNanos = maxAge == null ? Long.MAX_VALUE : maxAge.toNanos();
        this.entries = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .ticker(ticker)
                .expireAfter(new Expiry<ScopedKey, Entry>() {
                    @Override
                    public long expireAfterCreate(ScopedKey key, Entry entry, long now) {
                        return entry.lifeNanos();
                    }

                    @Override
                    public long expireAfterUpdate(ScopedKey key, Entry entry, long now, long remaining) {
                        return entry.lifeNanos();
                    }

                    @Override
                    public long expireAfterRead(ScopedKey key, Entry entry, long now, long remaining) {
                        return remaining;
                    }
                })
                // Its upkeep (evictions, expiries) on the threads that write, not in the JVM's common pool, which an
                // application server's threads are not meant to hand work to.
                .executor(Runnable::run)
                .build();
    }

    @Override
    public Optional<IdempotencyRecord> get(ScopedKey key) {
        return entries.getIfPresent(key) instanceof Held held ? Optional.of(held.record()) : Optional.empty();
    }

    @Override
    public void put(IdempotencyRecord finished) {
        put(finished, null);
    }

    @Override
    public void put(IdempotencyRecord finished, Duration atMost) {
        long life = lifeNanos(finished);
        if (atMost != null) {
            life = Math.min(life, atMost.toNanos());
        }
        if (life <= 0) {
            return;
        }
        // What it holds was known at its last sighting (a completion's is its completion): not after a clear since.
        long asOf = knownAt(finished);
        if (clearedSince(asOf)) {
            return;
        }
        ScopedKey key = finished.scopedKey();
        Held held = new Held(finished, life);
        entries.put(key, held);
        undoIfClearedSince(asOf, key, held);
        signals.signal(key.cacheId());
    }

    /**
     * A clear made while an entry was written, which it may have missed: the entry goes again when it was known before
     * the clear ({@link #clear} sets the time first, then empties).
     */
    private void undoIfClearedSince(long asOf, ScopedKey key, Held held) {
        if (clearedSince(asOf)) {
            entries.asMap().remove(key, held);
        }
    }

    /** Whether the cache was emptied at or after {@code asOf} (epoch milliseconds of its clock). */
    private boolean clearedSince(long asOf) {
        long cleared = clearedAt;
        return cleared != Long.MIN_VALUE && asOf <= cleared;
    }

    @Override
    public void putLoaded(IdempotencyRecord finished) {
        putLoaded(finished, null);
    }

    @Override
    public void putLoaded(IdempotencyRecord finished, java.time.Instant readStarted) {
        long life = lifeNanos(finished);
        long asOf = InfinispanRecordCache.readStartedAt(readStarted, clock);
        if (life <= 0 || clearedSince(asOf)) {
            return;
        }
        // Absent only: a tombstone (released or deleted since the read) or the record itself stays as it is.
        ScopedKey key = finished.scopedKey();
        Held held = new Held(finished, life);
        if (entries.asMap().putIfAbsent(key, held) == null) {
            undoIfClearedSince(asOf, key, held);
            signals.signal(key.cacheId());
        }
    }

    /** As {@link InfinispanRecordCache#knownAt}. */
    private static long knownAt(IdempotencyRecord r) {
        return InfinispanRecordCache.knownAt(r);
    }

    /**
     * How long an entry for the record may live: until the record expires, and at most the cache's max age; zero or
     * less: not to be held.
     */
    private long lifeNanos(IdempotencyRecord record) {
        return record.isFinished()
                ? Math.min(maxAgeNanos, TimeUnit.MILLISECONDS.toNanos(record.expiresAt().toEpochMilli() - clock.millis()))
                : 0;
    }

    /** Released or deleted: a tombstone, which also wakes this node's waiters, one of which claims next. */
    @Override
    public void evict(ScopedKey key) {
        entries.put(key, new Tombstone(TOMBSTONE_NANOS));
        signals.signal(key.cacheId());
    }

    /**
     * Empties the cache, tombstones included: a record read from the store before this, or last seen before it, is not
     * taken afterwards (it may be what an import replaced, or what a deletion whose tombstone went with it removed).
     */
    @Override
    public void clear() {
        clearedAt = Math.max(clearedAt, clock.millis());
        entries.invalidateAll();
    }

    @Override
    public int size() {
        entries.cleanUp(); // expired entries out first
        return entries.asMap().size();
    }

    @Override
    public boolean holds(ScopedKey key) {
        return entries.asMap().containsKey(key);
    }

    @Override
    public boolean shared() {
        return false;
    }

    /**
     * A second: a completion on another node (each keeps a cache of its own) never reaches this one, so a duplicate
     * waiting here for a call another node runs looks at the store again at this pace rather than at the lease's end.
     */
    @Override
    public java.time.Duration lookAgainAfter() {
        return LOOK_AGAIN;
    }

    private static final java.time.Duration LOOK_AGAIN = java.time.Duration.ofSeconds(1);

    @Override
    public String description() {
        return "a local cache (this JVM's, up to " + maxEntries + " entries)";
    }

    @Override
    public int members() {
        return 1;
    }

    @Override
    public void close() {
        entries.invalidateAll();
    }
}
