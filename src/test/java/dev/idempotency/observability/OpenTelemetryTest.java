package dev.idempotency.observability;

import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The counters and timers reach OpenTelemetry through the {@code OpenTelemetry} bean (as MicroProfile
 * Telemetry 2 provides it), with the attribute {@code namespace} and never a key; the current span carries the
 * decision, and a replay or a rejection is an event on it. The real OpenTelemetry SDK, with its in-memory reader and
 * exporter.
 */
class OpenTelemetryTest {

    static final InMemoryMetricReader METRICS = InMemoryMetricReader.createDelta(); // each collection: since the last one
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    /** Keys no metric may ever carry (the cardinality guard). */
    static final List<String> KEYS = List.of("pay-7f3a91", "pay-b20c44");

    @ApplicationScoped
    public static class Telemetry {
        static final OpenTelemetrySdk SDK = OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(METRICS).build())
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                .build();

        @Produces
        OpenTelemetry openTelemetry() {
            return SDK;
        }
    }

    WeldContainer container;
    ObservabilityTest.Orders orders;
    Tracer tracer;

    @BeforeEach
    void start() {
        SPANS.reset();
        METRICS.collectAllMetrics(); // a clean slate: the next collection counts this test alone
        container = dev.idempotency.testing.IdempotencyWeld.weld(Map.of("idempotency.store", "memory"),
                ObservabilityTest.Orders.class, ObservabilityTest.Time.class, Telemetry.class).initialize();
        orders = container.select(ObservabilityTest.Orders.class).get();
        tracer = Telemetry.SDK.getTracer("test");
    }

    @AfterEach
    void stop() {
        container.close();
    }

    /** Runs the call inside a span of its own, as a server's request span would be, and returns that span. */
    SpanData inSpan(String name, Runnable call) {
        Span span = tracer.spanBuilder(name).startSpan();
        try (Scope ignored = span.makeCurrent()) {
            call.run();
        } catch (RuntimeException expected) {
            // a rejection is an answer too; its span is what this test reads
        } finally {
            span.end();
        }
        return SPANS.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
    }

    static long counter(Collection<MetricData> metrics, Counter counter) {
        return metrics.stream().filter(m -> m.getName().equals(MicroProfileMetricsPublisher.name(counter)))
                .flatMap(m -> m.getLongSumData().getPoints().stream())
                .filter(p -> ObservabilityTest.NS.equals(p.getAttributes().get(OpenTelemetryPublisher.NAMESPACE)))
                .mapToLong(p -> p.getValue()).sum();
    }

    @Test
    void onePaymentTwoRetriesAReusedKeyAndAMissingKeyAreCountedAndTraced() {
        SpanData first = inSpan("payment", () -> orders.place(KEYS.get(0), 1));
        SpanData retry = inSpan("retry-1", () -> orders.place(KEYS.get(0), 1));
        inSpan("retry-2", () -> orders.place(KEYS.get(0), 1));
        SpanData reused = inSpan("reused", () -> assertThatThrownBy(() -> orders.place(KEYS.get(0), 2))
                .isInstanceOf(IdempotencyKeyReusedException.class));
        SpanData missing = inSpan("missing", () -> assertThatThrownBy(() -> orders.place(null, 1))
                .isInstanceOf(IdempotencyKeyMissingException.class));
        orders.place(KEYS.get(1), 3); // outside any span: counted, nothing to trace

        Collection<MetricData> metrics = METRICS.collectAllMetrics();
        assertThat(counter(metrics, Counter.EXECUTED)).isEqualTo(2);
        assertThat(counter(metrics, Counter.REPLAYED)).isEqualTo(2);
        assertThat(counter(metrics, Counter.MISMATCHES)).isEqualTo(1);
        assertThat(counter(metrics, Counter.KEYS_MISSING)).isEqualTo(1);
        MetricData replay = metrics.stream().filter(m -> m.getName().equals(MicroProfileMetricsPublisher.name(Timer.REPLAY)))
                .findFirst().orElseThrow();
        assertThat(replay.getUnit()).isEqualTo("s");
        assertThat(replay.getHistogramData().getPoints()).singleElement().satisfies(p -> assertThat(p.getCount()).isEqualTo(2));

        AttributeKey<String> outcome = OpenTelemetryPublisher.OUTCOME;
        assertThat(first.getAttributes().get(outcome)).isEqualTo("executed");
        assertThat(first.getEvents()).isEmpty();
        assertThat(retry.getAttributes().get(outcome)).isEqualTo("replayed");
        assertThat(retry.getAttributes().get(OpenTelemetryPublisher.REPLAYED_FROM)).isEqualTo("cache");
        assertThat(retry.getAttributes().get(OpenTelemetryPublisher.SPAN_NAMESPACE)).isEqualTo(ObservabilityTest.NS);
        assertThat(retry.getEvents()).extracting(EventData::getName).containsExactly("idempotency.replayed");
        assertThat(reused.getAttributes().get(outcome)).isEqualTo("mismatch");
        assertThat(reused.getEvents()).extracting(EventData::getName).containsExactly("idempotency.mismatch");
        assertThat(missing.getAttributes().get(outcome)).isEqualTo("key_missing");
    }

    /** The cardinality guard: no metric point carries a key, and the only attribute of any is the namespace. */
    @Test
    void noMetricIsEverTaggedWithAKey() {
        for (String key : KEYS) {
            orders.place(key, 1);
            orders.place(key, 1);
            assertThatThrownBy(() -> orders.place(key, 2)).isInstanceOf(IdempotencyKeyReusedException.class);
        }
        Collection<MetricData> metrics = METRICS.collectAllMetrics();
        assertThat(metrics).isNotEmpty();
        List<PointData> points = metrics.stream().flatMap(m -> m.getData().getPoints().stream()).collect(Collectors.toList());
        assertThat(points).isNotEmpty();
        for (PointData p : points) {
            Set<String> attributeKeys = p.getAttributes().asMap().keySet().stream().map(AttributeKey::getKey).collect(Collectors.toSet());
            assertThat(attributeKeys).as("a metric's attributes").containsExactly("namespace");
            assertThat(p.getAttributes().asMap().values()).as("no key in a metric").noneMatch(v -> KEYS.stream().anyMatch(k -> String.valueOf(v).contains(k)));
        }
        SpanData replay = inSpan("a-replay", () -> orders.place(KEYS.get(0), 1));
        assertThat(replay.getAttributes().asMap().values()).as("no key on a span").noneMatch(v -> KEYS.stream().anyMatch(k -> String.valueOf(v).contains(k)));
        assertThat(replay.getEvents()).flatExtracting(e -> e.getAttributes().asMap().values())
                .noneMatch(v -> KEYS.stream().anyMatch(k -> String.valueOf(v).contains(k)));
    }
}
