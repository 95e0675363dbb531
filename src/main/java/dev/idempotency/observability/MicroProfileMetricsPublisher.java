package dev.idempotency.observability;

import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;

import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiFunction;

/**
 * Publishes to MicroProfile Metrics (application scope): counters {@code idempotency.<counter>} and timers
 * {@code idempotency.<timer>}, tagged {@code namespace}. Loaded only when the API is there.
 *
 * <p>Each metric is looked up in the registry once per namespace and kept: the registry hands out the same metric for
 * the same name and tags, and a lookup (a metric id with its tags built, validated and found in a sorted map) cost
 * every call more than the update itself. The namespaces are the application's idempotent methods and the namespaces
 * it names: as few as the registry's own entries.
 */
public final class MicroProfileMetricsPublisher implements Observability.Publisher {

    private static final Counter[] COUNTERS = Counter.values();
    private static final Timer[] TIMERS = Timer.values();

    private final Kept<org.eclipse.microprofile.metrics.Counter> counters;
    private final Kept<org.eclipse.microprofile.metrics.Timer> timers;

    public MicroProfileMetricsPublisher(MetricRegistry registry) {
        this.counters = new Kept<>(COUNTERS.length, (namespace, i) -> registry.counter(name(COUNTERS[i]), new Tag("namespace", namespace)));
        this.timers = new Kept<>(TIMERS.length, (namespace, i) -> registry.timer(name(TIMERS[i]), new Tag("namespace", namespace)));
    }

    static String name(Enum<?> metric) {
        return "idempotency." + metric.name().toLowerCase(Locale.ROOT).replace('_', '.');
    }

    @Override
    public void increment(String namespace, Counter counter) {
        counters.of(namespace, counter.ordinal()).inc();
    }

    @Override
    public void record(String namespace, Timer timer, Duration duration) {
        timers.of(namespace, timer.ordinal()).update(duration);
    }

    /** The metrics of each namespace, one slot per counter or timer, filled on first use. */
    private static final class Kept<M> {
        private final int slots;
        private final BiFunction<String, Integer, M> lookUp;
        private final ConcurrentHashMap<String, AtomicReferenceArray<M>> byNamespace = new ConcurrentHashMap<>();

        Kept(int slots, BiFunction<String, Integer, M> lookUp) {
            this.slots = slots;
            this.lookUp = lookUp;
        }

        M of(String namespace, int slot) {
            AtomicReferenceArray<M> metrics = byNamespace.get(namespace);
            if (metrics == null) {
                metrics = byNamespace.computeIfAbsent(namespace, n -> new AtomicReferenceArray<>(slots));
            }
            M metric = metrics.get(slot);
            if (metric == null) {
                // Two first calls may both look it up: the registry answers both with the same metric.
                metric = lookUp.apply(namespace, slot);
                metrics.set(slot, metric);
            }
            return metric;
        }
    }
}
