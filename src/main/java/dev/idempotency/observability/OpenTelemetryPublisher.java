package dev.idempotency.observability;

import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Publishes to OpenTelemetry, through the {@code OpenTelemetry} bean of MicroProfile Telemetry 2 (WildFly, Open
 * Liberty): the counters as OpenTelemetry counters and the timers as histograms in seconds, under the names of the
 * MicroProfile Metrics ones ({@code idempotency.replayed}, {@code idempotency.claim}, ...), with the attribute
 * {@code namespace} and never a key; and the decision on the current span ({@link #decided}). Loaded only when
 * the API is there.
 */
public final class OpenTelemetryPublisher implements Observability.Publisher, Observability.Trace {

    static final String SCOPE = "dev.idempotency";
    static final AttributeKey<String> NAMESPACE = AttributeKey.stringKey("namespace");
    /** On a span: what the library decided for the request or call. */
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("idempotency.outcome");
    static final AttributeKey<String> SPAN_NAMESPACE = AttributeKey.stringKey("idempotency.namespace");
    /** On a span of a replay: {@code cache} or {@code store}. */
    static final AttributeKey<String> REPLAYED_FROM = AttributeKey.stringKey("idempotency.replayed_from");

    private final Map<Counter, LongCounter> counters = new EnumMap<>(Counter.class);
    private final Map<Timer, DoubleHistogram> timers = new EnumMap<>(Timer.class);
    /** One attribute set per namespace (a handful per application), made once. */
    private final Map<String, Attributes> attributes = new ConcurrentHashMap<>();

    public OpenTelemetryPublisher(OpenTelemetry openTelemetry) {
        Meter meter = openTelemetry.getMeter(SCOPE);
        for (Counter c : Counter.values()) {
            counters.put(c, meter.counterBuilder(MicroProfileMetricsPublisher.name(c)).setUnit("{request}")
                    .setDescription(c.description()).build());
        }
        for (Timer t : Timer.values()) {
            timers.put(t, meter.histogramBuilder(MicroProfileMetricsPublisher.name(t)).setUnit("s")
                    .setDescription(t.description()).build());
        }
    }

    private Attributes of(String namespace) {
        return attributes.computeIfAbsent(namespace, n -> Attributes.of(NAMESPACE, n));
    }

    @Override
    public void increment(String namespace, Counter counter) {
        counters.get(counter).add(1, of(namespace));
    }

    @Override
    public void record(String namespace, Timer timer, Duration duration) {
        timers.get(timer).record(duration.toNanos() / 1e9, of(namespace));
    }

    /**
     * The current span (the server's span of the HTTP request, or the caller's own) carries the decision, and a
     * decision not to run is an event on it: a trace shows why the operation did not run. Never the key's payload
     * or the stored response.
     */
    @Override
    public void decided(String namespace, String outcome, Boolean fromCache) {
        Span span = Span.current();
        if (!span.isRecording()) {
            return;
        }
        span.setAttribute(OUTCOME, outcome);
        span.setAttribute(SPAN_NAMESPACE, namespace);
        if (fromCache != null) {
            span.setAttribute(REPLAYED_FROM, fromCache ? "cache" : "store");
        }
        if (!outcome.equals(Observability.EXECUTED)) {
            span.addEvent("idempotency." + outcome, fromCache == null ? Attributes.of(SPAN_NAMESPACE, namespace)
                    : Attributes.of(SPAN_NAMESPACE, namespace, REPLAYED_FROM, fromCache ? "cache" : "store"));
        }
    }
}
