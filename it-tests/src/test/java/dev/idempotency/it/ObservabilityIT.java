package dev.idempotency.it;

import dev.idempotency.example.ItOps;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metrics, traces and readiness in a server with MicroProfile Metrics, Telemetry and Health (Open Liberty,
 * mpMetrics-5.1, mpTelemetry-2.0 and mpHealth-4.0; Payara Micro 6, MicroProfile Metrics and Health only; WildFly 39,
 * MicroProfile Telemetry only, exporting over OTLP to the test's {@link OtlpReceiver}): after a scripted sequence of
 * requests the metrics endpoint and the OpenTelemetry export show the counts, and the spans the decisions; the
 * readiness check is up, then down once the store's database is broken.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ObservabilityIT extends ServerIT {

    static final String NAMESPACE = "dev.idempotency.example.PaymentsResource#create(PaymentRequest,UriInfo)";
    static final String PAYMENT = "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"metrics\"}";

    static final boolean WILDFLY = "wildfly".equals(System.getProperty("server.name"));
    /** OTLP over HTTP's usual port, where WildFly's exporter is pointed (the deployment's configuration below). */
    static final int OTLP_PORT = 4318;
    /** Started before the deployment (class initialisation), so that the server's first export finds it. */
    static final OtlpReceiver RECEIVER = WILDFLY ? receiver() : null;

    static OtlpReceiver receiver() {
        try {
            return new OtlpReceiver(OTLP_PORT, NAMESPACE);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not listen on 127.0.0.1:" + OTLP_PORT + " for the server's OTLP export", e);
        }
    }

    @Deployment(testable = false)
    static WebArchive deployment() throws IOException {
        WebArchive war = exampleWithTestBeans().addClass(ItOps.class);
        if (WILDFLY) {
            // MicroProfile Telemetry is off until the application turns it on; its SDK is configured through MicroProfile Config.
            String config;
            try (InputStream in = ObservabilityIT.class.getResourceAsStream("/it-microprofile-config.properties")) {
                config = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            config += "\notel.sdk.disabled=false\notel.service.name=idempotency-it\notel.exporter.otlp.protocol=http/protobuf"
                    + "\notel.exporter.otlp.endpoint=http://127.0.0.1:" + OTLP_PORT + "\notel.metrics.exporter=otlp"
                    + "\notel.traces.exporter=otlp\notel.logs.exporter=none\notel.metric.export.interval=1000\notel.bsp.schedule.delay=100\n";
            war.addAsResource(new StringAsset(config), "META-INF/microprofile-config.properties");
        }
        return war;
    }

    /** Where a server's OpenTelemetry export is read: Liberty's log (its logging exporters), or the receiver (WildFly). */
    interface Exported {
        /** The counters of the payments namespace in a whole metrics export made after this call. */
        Map<String, Long> nextCounters() throws Exception;

        /** A point from which {@link #spansSince} reads. */
        long mark() throws Exception;

        /** The spans exported since the mark, as text with their attributes as {@code key=value}. */
        String spansSince(long mark) throws Exception;
    }

    static final List<String> COUNTERS = List.of("idempotency.executed", "idempotency.replayed", "idempotency.mismatches",
            "idempotency.keys.missing");

    Exported exported() {
        if (WILDFLY) {
            return new Exported() {
                @Override
                public Map<String, Long> nextCounters() throws Exception {
                    int now = RECEIVER.metricExports();
                    // The first export after now may have been collected before it: the second was not.
                    await("two metrics exports to the receiver", () -> RECEIVER.metricExports() >= now + 2);
                    return RECEIVER.export(now + 1);
                }

                @Override
                public long mark() {
                    return RECEIVER.spanCount();
                }

                @Override
                public String spansSince(long mark) {
                    return RECEIVER.spansFrom((int) mark);
                }
            };
        }
        return new Exported() {
            @Override
            public Map<String, Long> nextCounters() throws Exception {
                String export = nextExport(java.nio.file.Files.size(serverLog()));
                Map<String, Long> counters = new java.util.HashMap<>();
                COUNTERS.forEach(name -> counters.put(name, otelCounter(export, name)));
                return counters;
            }

            @Override
            public long mark() throws Exception {
                return java.nio.file.Files.size(serverLog());
            }

            @Override
            public String spansSince(long mark) throws Exception {
                return logAfter(mark);
            }
        };
    }

    URI server(String path) {
        return URI.create(base.getProtocol() + "://" + base.getHost() + ":" + base.getPort() + "/" + path);
    }

    String metrics() throws Exception {
        return send(java.net.http.HttpRequest.newBuilder(server("metrics?scope=application"))).body();
    }

    /** The value of a counter for the payments namespace, 0 when absent. */
    static double counter(String metrics, String name) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + "{") && line.contains("namespace=\"" + NAMESPACE + "\"")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    /** One payment, two retries, its key reused with another amount, and one without a key; returns the key. */
    String scriptedSequence() throws Exception {
        String k = UUID.randomUUID().toString();
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT.replace("1000", "2000"))).statusCode()).isEqualTo(422);
        assertThat(send(postJson("api/payments", null, PAYMENT)).statusCode()).isEqualTo(400);
        return k;
    }

    @Test
    @Order(1)
    @DisabledIfSystemProperty(named = "server.name", matches = "wildfly|glassfish",
            disabledReason = "WildFly 39 has no MicroProfile Metrics: its counts are asserted through OpenTelemetry; GlassFish 8 has no MicroProfile Metrics either")
    @DisplayName("The metrics endpoint shows the counts of a scripted sequence, tagged by namespace")
    void metricsAfterAScriptedSequence() throws Exception {
        String before = metrics();
        scriptedSequence();
        String after = metrics();
        assertThat(counter(after, "idempotency_executed_total") - counter(before, "idempotency_executed_total")).as(after).isEqualTo(1.0);
        assertThat(counter(after, "idempotency_replayed_total") - counter(before, "idempotency_replayed_total")).isEqualTo(2.0);
        assertThat(counter(after, "idempotency_mismatches_total") - counter(before, "idempotency_mismatches_total")).isEqualTo(1.0);
        assertThat(counter(after, "idempotency_keys_missing_total") - counter(before, "idempotency_keys_missing_total")).isEqualTo(1.0);
        assertThat(after).contains("idempotency_claim_seconds");
    }

    /**
     * The server's log, where MicroProfile Telemetry's logging exporters write (bootstrap.properties of the profile);
     * the server is {@code liberty.server}, {@code it} unless the profile says otherwise.
     */
    static java.nio.file.Path serverLog() {
        return java.nio.file.Path.of(System.getProperty("liberty.home"), "usr", "servers", System.getProperty("liberty.server", "it"),
                "logs", "messages.log");
    }

    static String logAfter(long offset) throws Exception {
        byte[] all = java.nio.file.Files.readAllBytes(serverLog());
        return new String(all, (int) Math.min(offset, all.length), (int) Math.max(0, all.length - offset), java.nio.charset.StandardCharsets.UTF_8);
    }

    static final String EXPORT = "Received a collection of";

    /**
     * The value of an OpenTelemetry counter for the payments namespace in one metrics export, as the logging exporter
     * writes it, a line a metric ({@code name=idempotency.replayed, ... attributes={namespace="..."}, value=2}); 0 when absent.
     */
    static long otelCounter(String export, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("name=" + java.util.regex.Pattern.quote(name)
                + ",.*?attributes=\\{namespace=\"" + java.util.regex.Pattern.quote(NAMESPACE) + "\"}, value=(\\d+)").matcher(export);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** The first whole metrics export written after the offset (whole once the next one has begun). */
    static String nextExport(long offset) throws Exception {
        String[] log = new String[1];
        await("two metrics exports after this point", () -> {
            log[0] = logAfter(offset);
            int first = log[0].indexOf(EXPORT);
            return first >= 0 && log[0].indexOf(EXPORT, first + 1) > 0;
        });
        int first = log[0].indexOf(EXPORT);
        return log[0].substring(first, log[0].indexOf(EXPORT, first + 1));
    }

    @Test
    @Order(2) // before readiness, which breaks the store
    @DisabledIfSystemProperty(named = "server.name", matches = "payara|glassfish",
            disabledReason = "Payara Micro 6 and 7 have MicroProfile Metrics, not MicroProfile Telemetry 2 (Payara 7's telemetry is tracing only): their counts are asserted on the metrics endpoint; GlassFish 8 has no MicroProfile Telemetry")
    @DisplayName("OpenTelemetry (MicroProfile Telemetry 2): the same counts exported, and the span of a retry says replayed")
    void openTelemetryAfterAScriptedSequence() throws Exception {
        Exported exported = exported();
        Map<String, Long> before = exported.nextCounters();
        long start = exported.mark();
        String k = scriptedSequence();
        Map<String, Long> after = exported.nextCounters();
        assertThat(after.getOrDefault("idempotency.executed", 0L) - before.getOrDefault("idempotency.executed", 0L)).as(after.toString()).isEqualTo(1);
        assertThat(after.getOrDefault("idempotency.replayed", 0L) - before.getOrDefault("idempotency.replayed", 0L)).isEqualTo(2);
        assertThat(after.getOrDefault("idempotency.mismatches", 0L) - before.getOrDefault("idempotency.mismatches", 0L)).isEqualTo(1);
        assertThat(after.getOrDefault("idempotency.keys.missing", 0L) - before.getOrDefault("idempotency.keys.missing", 0L)).isEqualTo(1);
        String spans = exported.spansSince(start);
        assertThat(spans).as("the span of a retry carries the decision").contains("idempotency.outcome=replayed");
        assertThat(spans).contains("idempotency.outcome=executed").contains("idempotency.outcome=mismatch")
                .contains("idempotency.outcome=key_missing");
        assertThat(spans).as("no key in the telemetry").doesNotContain(k);
    }

    @Test
    @Order(3)
    @DisabledIfSystemProperty(named = "server.name", matches = "wildfly",
            disabledReason = "standalone-full.xml has no MicroProfile Health subsystem")
    @DisplayName("Readiness: up, then down when the store's database is broken")
    void readiness() throws Exception {
        HttpResponse<String> up = send(java.net.http.HttpRequest.newBuilder(server("health/ready")));
        assertThat(up.statusCode()).as(up.body()).isEqualTo(200);
        assertThat(up.body()).contains("\"name\":\"idempotency\"").contains("\"status\":\"UP\"");

        assertThat(send(postJson("api/it/ops/break-store", null, "")).statusCode()).isEqualTo(200);
        HttpResponse<String> down = send(java.net.http.HttpRequest.newBuilder(server("health/ready")));
        assertThat(down.statusCode()).as(down.body()).isEqualTo(503);
        assertThat(down.body()).contains("\"name\":\"idempotency\"").contains("DOWN");
    }
}
