package dev.idempotency.cdi;

import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;

import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;

import java.time.Duration;
import java.util.Locale;

/**
 * Publishes to MicroProfile Metrics (application scope): counters {@code idempotency.<counter>} and timers
 * {@code idempotency.<timer>}, tagged {@code namespace}. Loaded only when the API is there.
 */
final class MicroProfileMetricsPublisher implements Observability.Publisher {

    private final MetricRegistry registry;

    MicroProfileMetricsPublisher(MetricRegistry registry) {
        this.registry = registry;
    }

    static String name(Enum<?> metric) {
        return "idempotency." + metric.name().toLowerCase(Locale.ROOT).replace('_', '.');
    }

    @Override
    public void increment(String namespace, Counter counter) {
        registry.counter(name(counter), new Tag("namespace", namespace)).inc();
    }

    @Override
    public void record(String namespace, Timer timer, Duration duration) {
        registry.timer(name(timer), new Tag("namespace", namespace)).update(duration);
    }
}
