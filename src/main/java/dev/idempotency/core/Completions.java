package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What happens once a record is finished and committed: into the cache (on every node), its watchers called back, its
 * waiters woken; and the watchers themselves ({@link IdempotencyEngine#whenFinished}), called once each, from this node's
 * completions or, through the cache, from another node's.
 */
final class Completions {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final QuietCache cache;
    private final CompletionSignals signals;
    /** Callbacks waiting for a key to finish, by {@link ScopedKey#cacheId()}. */
    private final ConcurrentHashMap<String, List<Watch>> watches = new ConcurrentHashMap<>();

    Completions(QuietCache cache, CompletionSignals signals) {
        this.cache = cache;
        this.signals = signals;
        signals.onSignal(this::signalled);
    }

    /** A finished record, committed: cached, watchers called, waiters woken. */
    void finished(IdempotencyRecord record) {
        cache.put(record);
        List<Watch> watching = watches.remove(record.scopedKey().cacheId());
        if (watching != null) {
            watching.forEach(w -> w.call(record));
        }
        signals.signal(record.scopedKey());
    }

    /** Waiters of a key woken with no record to give them (a release, a rollback): they look again. */
    void changed(ScopedKey key) {
        signals.signal(key);
    }

    /**
     * Calls back once when the key has a finished record: at once when {@code lookup} finds one, else when it finishes.
     */
    void whenFinished(ScopedKey key, Consumer<IdempotencyRecord> callback,
                      Function<ScopedKey, java.util.Optional<IdempotencyRecord>> lookup) {
        Watch watch = new Watch(key, callback, new AtomicBoolean());
        // Registered before the look-up, so that a completion in between is not missed.
        watches.computeIfAbsent(key.cacheId(), k -> new CopyOnWriteArrayList<>()).add(watch);
        lookup.apply(key).ifPresent(r -> {
            unwatch(watch);
            watch.call(r);
        });
    }

    /** A signal, from here or another node: a watched key finished elsewhere is in the cache by now. */
    private void signalled(String cacheId) {
        List<Watch> watching = watches.get(cacheId);
        if (watching == null || watching.isEmpty()) {
            return;
        }
        IdempotencyRecord record = cache.finished(watching.get(0).key());
        if (record != null) { // else released, deleted, or not cached: they keep watching
            watching.forEach(w -> {
                unwatch(w);
                w.call(record);
            });
        }
    }

    private volatile java.util.concurrent.ScheduledFuture<?> lookingAgain;
    /** Whether a round of {@link #lookAgain} runs: the next tick skips rather than starting another. */
    private final AtomicBoolean looking = new AtomicBoolean();
    /** The most watched keys one round reads (a random choice when there are more): a round costs a bounded time. */
    static final int KEYS_PER_ROUND = 100;

    /**
     * Looks at the watched keys again every {@code every} (at least 100 ms), on {@code executor}: a completion on another
     * node reaches this one through the cache, and only while the cache works (a cluster cache bypassed in a partition,
     * a write that failed, a cache of this node's own, no cache). {@code scheduler} {@code null}: stops.
     */
    void lookAgainWith(java.util.concurrent.ScheduledExecutorService scheduler, java.util.concurrent.Executor executor,
                       java.time.Duration every, Function<ScopedKey, java.util.Optional<IdempotencyRecord>> lookup) {
        java.util.concurrent.ScheduledFuture<?> before = lookingAgain;
        if (before != null) {
            before.cancel(false);
        }
        if (scheduler == null) {
            lookingAgain = null;
            return;
        }
        long millis = Math.max(100, every.toMillis());
        lookingAgain = scheduler.scheduleWithFixedDelay(() -> {
            if (watches.isEmpty() || !looking.compareAndSet(false, true)) {
                return;
            }
            try {
                executor.execute(() -> {
                    try {
                        lookAgain(lookup);
                    } finally {
                        looking.set(false);
                    }
                });
            } catch (RuntimeException e) { // rejected (the executor shuts down, or is full): the next tick tries again
                looking.set(false);
            }
        }, millis, millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void lookAgain(Function<ScopedKey, java.util.Optional<IdempotencyRecord>> lookup) {
        List<List<Watch>> round = new java.util.ArrayList<>(watches.values());
        if (round.size() > KEYS_PER_ROUND) {
            java.util.Collections.shuffle(round);
            round = round.subList(0, KEYS_PER_ROUND);
        }
        for (List<Watch> watching : round) {
            if (watching.isEmpty()) {
                continue;
            }
            try {
                lookup.apply(watching.get(0).key()).ifPresent(record -> watching.forEach(w -> {
                    unwatch(w);
                    w.call(record);
                }));
            } catch (Throwable e) { // the store did not answer, or a listener failed: the next round asks again
                LOG.log(Level.FINE, "Could not look again at a watched key", e);
            }
        }
    }

    private void unwatch(Watch watch) {
        watches.computeIfPresent(watch.key().cacheId(), (k, l) -> {
            l.remove(watch);
            return l.isEmpty() ? null : l;
        });
    }

    /** One callback, called once. */
    private record Watch(ScopedKey key, Consumer<IdempotencyRecord> callback, AtomicBoolean called) {
        void call(IdempotencyRecord record) {
            if (called.compareAndSet(false, true)) {
                try {
                    callback.accept(record);
                } catch (RuntimeException | LinkageError | AssertionError e) {
                    LOG.log(Level.WARNING, "A listener of " + key + " failed", e);
                }
            }
        }
    }
}
