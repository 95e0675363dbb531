package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The cache of finished records in front of the store, as the engine uses it: it may only ever spare the store a
 * question, so a failing cache is logged and passed over, never turned into an error.
 */
final class QuietCache {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());
    /** How long a waiter waits at most when the cache cannot tell. */
    private static final Duration FALLBACK_LOOK_AGAIN = Duration.ofSeconds(1);
    /** How long a waiter waits at most with no cache: only this node's completions wake it. */
    private static final Duration NO_CACHE_LOOK_AGAIN = Duration.ofSeconds(1);

    private final RecordCache cache;
    private final Clock clock;

    QuietCache(RecordCache cache, Clock clock) {
        this.cache = cache;
        this.clock = clock;
    }

    RecordCache cache() {
        return cache;
    }

    boolean exists() {
        return cache != RecordCache.NONE;
    }

    /** The finished, unexpired record the cache holds for the key; null when none, or when the cache fails. */
    IdempotencyRecord finished(ScopedKey key) {
        IdempotencyRecord cached;
        try {
            cached = cache.get(key).orElse(null);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not read the cache for " + key + "; asking the store", e);
            return null;
        }
        // In whole milliseconds (no Instant built for a duplicate): at most a millisecond early, when the store answers.
        return cached != null && cached.isFinished() && clock.millis() < cached.expiresAt().toEpochMilli() ? cached : null;
    }

    /** A finished record, committed here: into the cache (on every node). */
    void put(IdempotencyRecord record) {
        try {
            cache.put(record);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache the finished " + record.scopedKey() + "; duplicates will ask the store", e);
        }
    }

    /**
     * A finished record read from the store by a read that started at {@code readStarted}, unless a release or a
     * deletion evicted it since, or the cache was emptied since.
     */
    void putLoaded(IdempotencyRecord record, Instant readStarted) {
        try {
            cache.putLoaded(record, readStarted);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache the finished " + record.scopedKey() + "; duplicates will ask the store", e);
        }
    }

    void evict(ScopedKey key) {
        try {
            cache.evict(key);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not evict " + key + " from the cache", e);
        }
    }

    /** {@link RecordCache#mark}: a cache that fails marks nothing and holds nothing off (the store judges). */
    boolean mark(ScopedKey key, String holder, Duration atMost) {
        try {
            return cache.mark(key, holder, atMost);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not mark " + key + " as running in the cache; the store alone holds duplicates off", e);
            return true;
        }
    }

    void unmark(ScopedKey key, String holder) {
        try {
            cache.unmark(key, holder);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not remove the running marker of " + key + "; it expires on its own", e);
        }
    }

    /**
     * A wait, cut to the cache's {@link RecordCache#lookAgainAfter()} where its wake-ups can be lost; with no cache, to
     * {@link #NO_CACHE_LOOK_AGAIN}: a completion on another node wakes no one here.
     */
    Duration unwoken(Duration wait) {
        Duration atMost;
        try {
            atMost = cache == RecordCache.NONE ? NO_CACHE_LOOK_AGAIN : cache.lookAgainAfter();
        } catch (RuntimeException e) {
            atMost = FALLBACK_LOOK_AGAIN;
        }
        return atMost == null ? wait : Durations.min(wait, atMost);
    }
}
