package dev.idempotency.it;

import dev.idempotency.example.ItOps;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPEC E2, E3 in a server with MicroProfile Metrics, Telemetry and Health (Open Liberty, mpMetrics-5.1,
 * mpTelemetry-2.0 and mpHealth-4.0; Payara Micro 6, MicroProfile Metrics and Health only): after a scripted sequence of requests the metrics endpoint and the OpenTelemetry
 * export show the counts, and the spans the decisions; the readiness check is up, then down once the store's database
 * is broken.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ObservabilityIT extends ServerIT {

    static final String NAMESPACE = "dev.idempotency.example.PaymentsResource#create(PaymentRequest,UriInfo)";
    static final String PAYMENT = "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"metrics\"}";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return exampleWithTestBeans().addClass(ItOps.class);
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

    /** The server's log, where MicroProfile Telemetry's logging exporters write (bootstrap.properties of the profile). */
    static java.nio.file.Path serverLog() {
        return java.nio.file.Path.of(System.getProperty("liberty.home"), "usr", "servers", "it", "logs", "messages.log");
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
    @DisabledIfSystemProperty(named = "server.name", matches = "payara",
            disabledReason = "Payara Micro 6 has MicroProfile Metrics, not MicroProfile Telemetry 2: its counts are asserted on its metrics endpoint")
    @DisplayName("OpenTelemetry (MicroProfile Telemetry 2): the same counts exported, and the span of a retry says replayed")
    void openTelemetryAfterAScriptedSequence() throws Exception {
        String before = nextExport(java.nio.file.Files.size(serverLog()));
        long start = java.nio.file.Files.size(serverLog());
        String k = scriptedSequence();
        String after = nextExport(java.nio.file.Files.size(serverLog()));
        assertThat(otelCounter(after, "idempotency.executed") - otelCounter(before, "idempotency.executed")).as(after).isEqualTo(1);
        assertThat(otelCounter(after, "idempotency.replayed") - otelCounter(before, "idempotency.replayed")).isEqualTo(2);
        assertThat(otelCounter(after, "idempotency.mismatches") - otelCounter(before, "idempotency.mismatches")).isEqualTo(1);
        assertThat(otelCounter(after, "idempotency.keys.missing") - otelCounter(before, "idempotency.keys.missing")).isEqualTo(1);
        String spans = logAfter(start);
        assertThat(spans).as("the span of a retry carries the decision").contains("idempotency.outcome=replayed");
        assertThat(spans).contains("idempotency.outcome=executed").contains("idempotency.outcome=mismatch")
                .contains("idempotency.outcome=key_missing");
        assertThat(spans).as("no key in the telemetry").doesNotContain(k);
    }

    @Test
    @Order(3)
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
