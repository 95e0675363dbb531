package dev.idempotency.core;

import dev.idempotency.spi.ScopedKey;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Wakes waiters in this JVM. A subscription is a latch; a signal opens every latch of the key. */
public final class LocalCompletionSignals implements CompletionSignals {

    private final ConcurrentHashMap<String, Generation> generations = new ConcurrentHashMap<>();
    private final java.util.List<java.util.function.Consumer<String>> taps = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public Subscription subscribe(ScopedKey scopedKey) {
        String key = scopedKey.cacheId();
        Generation generation = generations.compute(key, (k, g) -> {
            Generation current = g == null ? new Generation() : g;
            current.subscribers++;
            return current;
        });
        return new Subscription() {
            @Override
            public boolean await(Duration max) throws InterruptedException {
                return generation.latch.await(Math.max(0, max.toNanos()), TimeUnit.NANOSECONDS);
            }

            @Override
            public void close() {
                generations.computeIfPresent(key, (k, g) -> {
                    if (g != generation) {
                        return g;
                    }
                    return --g.subscribers == 0 ? null : g;
                });
            }
        };
    }

    @Override
    public void signal(ScopedKey key) {
        signal(key.cacheId());
    }

    /** Wakes the waiters of the key with this {@link ScopedKey#cacheId()} (as a cluster event names it). */
    public void signal(String cacheId) {
        Generation generation = generations.remove(cacheId);
        if (generation != null) {
            generation.latch.countDown();
        }
        for (java.util.function.Consumer<String> tap : taps) {
            tap.accept(cacheId);
        }
    }

    /**
     * Wakes every waiter of this JVM, each of which looks at its key again: when completions elsewhere may have gone
     * unheard (the cache's listener moved to another server).
     */
    public void signalAll() {
        for (String cacheId : java.util.List.copyOf(generations.keySet())) {
            signal(cacheId);
        }
    }

    @Override
    public void onSignal(java.util.function.Consumer<String> cacheIds) {
        taps.add(java.util.Objects.requireNonNull(cacheIds, "cacheIds"));
    }

    /** Waiters currently subscribed, for tests and metrics. */
    public int waitingKeys() {
        return generations.size();
    }

    /** Callers subscribed right now, on every key (a racy sum, for tests and metrics). */
    public int waiters() {
        int n = 0;
        for (Generation g : generations.values()) {
            n += g.subscribers;
        }
        return n;
    }

    private static final class Generation {
        final CountDownLatch latch = new CountDownLatch(1);
        volatile int subscribers;
    }
}
