package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;

import org.infinispan.Cache;
import org.infinispan.context.Flag;
import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryCreated;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryModified;
import org.infinispan.notifications.cachelistener.event.CacheEntryEvent;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Finished records in an Infinispan cache (replicated, synchronous, when clustered), under
 * {@link ScopedKey#cacheId()};
 * and the wake-ups of waiting duplicates on every node: a finished record put here, or a tombstone, fires this
 * node's listener, which wakes its local waiters.
 *
 * <p>A released or deleted key leaves a <em>tombstone</em> under its id for {@value #TOMBSTONE_LIFESPAN_SECONDS}
 * s (a short entry that decodes to no record): a finished record read from the store before that release or
 * deletion, and put after it ({@link #putLoaded}, a put-if-absent), finds the tombstone and is not cached, so the
 * cache never outlives its record. A completion ({@link #put}) replaces a tombstone: it finished after it.
 *
 * <p>Every record entry carries an HMAC-SHA-256 over its scope, key and content ({@link RecordBytes}), keyed by the
 * cache's {@link CacheKeys}, checked on every read of a clustered cache or one whose keys come from a secret (a local
 * cache with this JVM's random keys is written by nobody else, and is not checked): an entry that does not verify, or
 * that verifies but sits under another scope's id, is never replayed. It is a miss (the store answers), counted ({@link #rejectedEntries()}),
 * logged once at WARNING (then at FINE), and replaced by a tombstone.
 */
public final class InfinispanRecordCache implements RecordCache, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(InfinispanRecordCache.class.getName());
    /** Longer than any store read that could race with a release or a deletion. */
    static final long TOMBSTONE_LIFESPAN_SECONDS = 60;
    /** A tombstone's first byte: no version of {@link RecordBytes} starts with it, so it decodes to no record. */
    private static final byte TOMBSTONE = 0;

    private final Cache<String, byte[]> cache;
    private final Clock clock;
    private final LocalCompletionSignals signals;
    private final WakeUps wakeUps = new WakeUps();
    private final AtomicLong nonce = new AtomicLong();
    private final ThreadLocal<javax.crypto.Mac> macs;
    /** Whether entries' MACs are checked when read (a shared cache, or keys from a secret). */
    private final boolean verify;
    private final AtomicLong rejected = new AtomicLong();

    /** With keys of this JVM alone (random): for a cache that no other process reads. */
    public InfinispanRecordCache(Cache<String, byte[]> cache, Clock clock, LocalCompletionSignals signals) {
        this(cache, clock, signals, CacheKeys.random());
    }

    /** @param keys the key of the entries' MAC: the same on every node that shares the cache */
    public InfinispanRecordCache(Cache<String, byte[]> cache, Clock clock, LocalCompletionSignals signals, CacheKeys keys) {
        this.macs = ThreadLocal.withInitial(keys::entryMac);
        // A cache of this JVM alone, with keys of its own, is written by nobody else: checking its MACs would cost
        // every replay an HMAC of the response (about 1.5 us a KiB) and protect against nothing. Entries carry their
        // MAC all the same.
        this.verify = keys.fromSecret() || cache.getCacheConfiguration().clustering().cacheMode().isClustered();
        this.cache = cache;
        this.clock = clock;
        this.signals = signals;
        cache.addListener(wakeUps);
    }

    @Override
    public Optional<IdempotencyRecord> get(ScopedKey key) {
        byte[] bytes = cache.get(key.cacheId());
        if (bytes == null) {
            return Optional.empty();
        }
        IdempotencyRecord r = verified(key.cacheId(), bytes);
        if (r != null && !r.scopedKey().equals(key)) {
            reject(key.cacheId(), "it is another scope's entry");
            return Optional.empty();
        }
        return Optional.ofNullable(r);
    }

    /** The record of an entry whose MAC verifies; {@code null} for a tombstone, another version, or a rejected entry. */
    private IdempotencyRecord verified(String id, byte[] bytes) {
        if (!verify) {
            return RecordBytes.versionOf(bytes) ? RecordBytes.decode(bytes) : null;
        }
        return switch (RecordBytes.check(bytes, macs.get())) {
            case VERIFIED -> RecordBytes.decode(bytes);
            case OTHER -> null;
            case FORGED -> {
                reject(id, "its MAC does not verify (forged, or written under another secret)");
                yield null;
            }
        };
    }

    /** A cache entry not to be trusted: counted, logged (the first at WARNING), replaced by a tombstone. */
    private void reject(String id, String why) {
        long n = rejected.incrementAndGet();
        LOG.log(n == 1 ? Level.WARNING : Level.FINE, "Rejected a cache entry ({0} so far): {1}; the store answers instead. "
                + "Nodes that share the cache need the same idempotency.cache.secret", new Object[] {n, why});
        try {
            cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES)
                    .put(id, tombstone(), TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not replace a rejected cache entry", e);
        }
    }

    /** Entries rejected since this cache started: their MAC did not verify, or they sat under another scope's id. */
    public long rejectedEntries() {
        return rejected.get();
    }

    @Override
    public void put(IdempotencyRecord finished) {
        put(finished, null);
    }

    @Override
    public void put(IdempotencyRecord finished, java.time.Duration atMost) {
        long lifespan = atMost == null ? lifespanMillis(finished) : Math.min(lifespanMillis(finished), atMost.toMillis());
        if (lifespan <= 0) {
            return;
        }
        cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES)
                .put(finished.scopedKey().cacheId(), RecordBytes.encode(finished, macs.get()), lifespan, TimeUnit.MILLISECONDS);
    }

    @Override
    public void putLoaded(IdempotencyRecord finished) {
        long lifespan = lifespanMillis(finished);
        if (lifespan <= 0) {
            return;
        }
        // Absent only: a tombstone (released or deleted since the read) or the record itself stays as it is.
        cache.putIfAbsent(finished.scopedKey().cacheId(), RecordBytes.encode(finished, macs.get()), lifespan, TimeUnit.MILLISECONDS);
    }

    /** How long an entry for the record may live: until the record expires; zero or less: not to be held. */
    private long lifespanMillis(IdempotencyRecord record) {
        return record.isFinished() ? record.expiresAt().toEpochMilli() - clock.millis() : 0;
    }

    /**
     * Released or deleted ({@link #remove} is this too): a tombstone, which also wakes the waiters on every node, one
     * of which claims next.
     */
    @Override
    public void evict(ScopedKey key) {
        cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES)
                .put(key.cacheId(), tombstone(), TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
    }

    private byte[] tombstone() {
        return java.nio.ByteBuffer.allocate(9).put(TOMBSTONE).putLong(nonce.incrementAndGet()).array();
    }

    @Override
    public void clear() {
        cache.clear();
    }

    /** Entries held (records and recent tombstones), for tests and operations. */
    public int size() {
        return cache.size();
    }

    /** The underlying cache. */
    public Cache<String, byte[]> cache() {
        return cache;
    }

    @Override
    public void close() {
        cache.removeListener(wakeUps);
    }

    @Listener(observation = Listener.Observation.POST)
    public final class WakeUps {
        @CacheEntryCreated
        @CacheEntryModified
        public void changed(CacheEntryEvent<String, byte[]> event) {
            String id = event.getKey();
            try {
                signals.signal(id);
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not wake the waiters of " + id, e);
            }
        }
    }
}
