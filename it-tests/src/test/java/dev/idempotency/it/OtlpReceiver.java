package dev.idempotency.it;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.zip.GZIPInputStream;

/**
 * An OpenTelemetry collector of the test's own, for a server that exports over OTLP only (WildFly): it takes OTLP over
 * HTTP with protobuf bodies ({@code /v1/metrics}, {@code /v1/traces}) on 127.0.0.1 and keeps, for one attribute value,
 * each counter's latest (cumulative) value per export, and every span's attributes.
 */
final class OtlpReceiver implements AutoCloseable {

    private final HttpServer server;
    private final String namespace;
    /** One map per metrics export: counter name to its value for the namespace. */
    private final List<Map<String, Long>> exports = new ArrayList<>();
    private final List<String> spans = new ArrayList<>();

    OtlpReceiver(int port, String namespace) throws IOException {
        this.namespace = namespace;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/v1/metrics", exchange -> {
            ExportMetricsServiceRequest request = ExportMetricsServiceRequest.parseFrom(body(exchange));
            Map<String, Long> counters = new HashMap<>();
            request.getResourceMetricsList().forEach(rm -> rm.getScopeMetricsList().forEach(sm -> {
                for (Metric m : sm.getMetricsList()) {
                    if (m.hasSum()) {
                        for (NumberDataPoint p : m.getSum().getDataPointsList()) {
                            if (p.getAttributesList().stream().anyMatch(a -> a.getKey().equals("namespace")
                                    && a.getValue().getStringValue().equals(namespace))) {
                                counters.put(m.getName(), p.hasAsInt() ? p.getAsInt() : (long) p.getAsDouble());
                            }
                        }
                    }
                }
            }));
            synchronized (this) {
                exports.add(counters);
            }
            answer(exchange, ExportMetricsServiceResponse.getDefaultInstance().toByteArray());
        });
        server.createContext("/v1/traces", exchange -> {
            ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body(exchange));
            List<String> received = new ArrayList<>();
            request.getResourceSpansList().forEach(rs -> rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(span ->
                    received.add(span.getName() + " " + text(span.getAttributesList()) + " events "
                            + span.getEventsList().stream().map(e -> e.getName()).collect(Collectors.joining(","))))));
            synchronized (this) {
                spans.addAll(received);
            }
            answer(exchange, ExportTraceServiceResponse.getDefaultInstance().toByteArray());
        });
        server.start();
    }

    private static byte[] body(HttpExchange exchange) throws IOException {
        InputStream in = exchange.getRequestBody();
        if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
            in = new GZIPInputStream(in);
        }
        return in.readAllBytes();
    }

    private static void answer(HttpExchange exchange, byte[] response) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, response.length);
        exchange.getResponseBody().write(response);
        exchange.close();
    }

    private static String text(List<KeyValue> attributes) {
        return attributes.stream().map(a -> a.getKey() + "=" + a.getValue().getStringValue()).collect(Collectors.joining(", "));
    }

    synchronized int metricExports() {
        return exports.size();
    }

    /** The counters of the namespace in the export with this index (0 first). */
    synchronized Map<String, Long> export(int index) {
        return exports.get(index);
    }

    synchronized int spanCount() {
        return spans.size();
    }

    /** The spans received from this index on, a line each: name, attributes as key=value, event names. */
    synchronized String spansFrom(int index) {
        return String.join("\n", spans.subList(Math.min(index, spans.size()), spans.size()));
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
