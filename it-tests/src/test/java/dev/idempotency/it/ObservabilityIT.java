package dev.idempotency.it;

import dev.idempotency.example.ItOps;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPEC E2 in a server with MicroProfile Metrics and Health (Open Liberty, mpMetrics-5.1 and mpHealth-4.0):
 * after a scripted sequence of requests the metrics endpoint shows the counts; the readiness check is up, then
 * down once the store's database is broken.
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

    @Test
    @Order(1)
    @DisplayName("The metrics endpoint shows the counts of a scripted sequence, tagged by namespace")
    void metricsAfterAScriptedSequence() throws Exception {
        String before = metrics();
        String k = UUID.randomUUID().toString();
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT)).statusCode()).isEqualTo(201);
        assertThat(send(postJson("api/payments", k, PAYMENT.replace("1000", "2000"))).statusCode()).isEqualTo(422);
        assertThat(send(postJson("api/payments", null, PAYMENT)).statusCode()).isEqualTo(400);
        String after = metrics();
        assertThat(counter(after, "idempotency_executed_total") - counter(before, "idempotency_executed_total")).as(after).isEqualTo(1.0);
        assertThat(counter(after, "idempotency_replayed_total") - counter(before, "idempotency_replayed_total")).isEqualTo(2.0);
        assertThat(counter(after, "idempotency_mismatches_total") - counter(before, "idempotency_mismatches_total")).isEqualTo(1.0);
        assertThat(counter(after, "idempotency_keys_missing_total") - counter(before, "idempotency_keys_missing_total")).isEqualTo(1.0);
        assertThat(after).contains("idempotency_claim_seconds");
    }

    @Test
    @Order(2)
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
