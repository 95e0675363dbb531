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
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Finished records in an Infinispan cache (replicated, synchronous, when clustered), under
 * {@link ScopedKey#cacheId()};
 * and the wake-ups of waiting duplicates on every node: a finished record put here, or a release signal
 * (a short-lived entry under {@code "~" + id}), fires this node's listener, which wakes its local waiters.
 */
public final class InfinispanRecordCache implements RecordCache, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(InfinispanRecordCache.class.getName());
    private static final String SIGNAL = "~";
    private static final long SIGNAL_LIFESPAN_MILLIS = Duration.ofMinutes(1).toMillis();

    private final Cache<String, byte[]> cache;
    private final Clock clock;
    private final LocalCompletionSignals signals;
    private final WakeUps wakeUps = new WakeUps();
    private final AtomicLong nonce = new AtomicLong();
    private final java.util.List<java.util.function.Consumer<IdempotencyRecord>> putListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    public InfinispanRecordCache(Cache<String, byte[]> cache, Clock clock, LocalCompletionSignals signals) {
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
        IdempotencyRecord r = RecordBytes.decode(bytes);
        return r == null || !r.scopedKey().equals(key) ? Optional.empty() : Optional.of(r);
    }

    @Override
    public void put(IdempotencyRecord finished) {
        long lifespan = finished.expiresAt().toEpochMilli() - clock.millis();
        if (lifespan <= 0 || !finished.isFinished()) {
            return;
        }
        cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES)
                .put(finished.scopedKey().cacheId(), RecordBytes.encode(finished), lifespan, TimeUnit.MILLISECONDS);
    }

    @Override
    public void evict(ScopedKey key) {
        String id = key.cacheId();
        var quiet = cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES);
        quiet.remove(id);
        // Released: wake the waiters on every node, one of them claims next.
        quiet.put(SIGNAL + id, new byte[] {(byte) nonce.incrementAndGet()}, SIGNAL_LIFESPAN_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void remove(ScopedKey key) {
        cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES).remove(key.cacheId());
    }

    @Override
    public void clear() {
        cache.clear();
    }

    @Override
    public void onPut(java.util.function.Consumer<IdempotencyRecord> listener) {
        putListeners.add(listener);
    }

    /** Entries held (records and recent signals), for tests and operations. */
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
                signals.signal(id.startsWith(SIGNAL) ? id.substring(SIGNAL.length()) : id);
                if (!id.startsWith(SIGNAL) && !putListeners.isEmpty() && event.getValue() != null) {
                    IdempotencyRecord r = RecordBytes.decode(event.getValue());
                    if (r != null) {
                        putListeners.forEach(l -> l.accept(r));
                    }
                }
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not wake the waiters of " + id, e);
            }
        }
    }
}
