package dev.idempotency.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two Payara Micro instances of the example, started exactly as the README says ({@code example/node 1},
 * {@code example/node 2}): one JGroups cluster on loopback, one PostgreSQL ({@link ExampleCluster}, shared with
 * {@link ChaosIT}). 64 racing duplicates spread over both are charged once.
 */
@ExtendWith(ExampleCluster.Extension.class)
class ClusterIT {

    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    ExampleCluster cluster;

    @BeforeEach
    void cluster(ExampleCluster cluster) {
        this.cluster = cluster;
    }

    long stat(int port, String field) throws Exception {
        return cluster.stat(port - 8079, field);
    }

    @Test
    @DisplayName("64 racing duplicates over two clustered nodes: one charge, one payment row")
    void racingDuplicatesOverTwoNodes() throws Exception {
        long charges = stat(8080, "charges") + stat(8081, "charges");
        long payments = stat(8080, "payments");
        String key = UUID.randomUUID().toString();
        String body = "{\"amount\":4200,\"currency\":\"EUR\",\"delayMillis\":2000}";
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            int port = i % 2 == 0 ? 8080 : 8081;
            answers.add(CLIENT.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/payments"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(120)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        int created = 0;
        for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(180, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isIn(201, 409);
            if (r.statusCode() == 201 && r.headers().firstValue("Idempotent-Replayed").isEmpty()) {
                created++;
            }
        }
        assertThat(created).isEqualTo(1);
        assertThat(stat(8080, "charges") + stat(8081, "charges")).isEqualTo(charges + 1);
        assertThat(stat(8081, "payments")).isEqualTo(payments + 1);
        // and a retry on either node is a replay of that one payment
        for (int port : new int[] {8080, 8081}) {
            HttpResponse<String> retry = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/payments"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        }
    }
    @Test
    @DisplayName("The functional API across nodes: a batch charged on node 1 and retried on node 2 charges nothing again")
    void aBatchRetriedOnTheOtherNodeIsReplayed() throws Exception {
        long charges = stat(8080, "charges") + stat(8081, "charges");
        String a = UUID.randomUUID().toString();
        String b = UUID.randomUUID().toString();
        String batch = "{\"items\":[{\"key\":\"" + a + "\",\"amount\":100,\"currency\":\"EUR\"},"
                + "{\"key\":\"" + b + "\",\"amount\":200,\"currency\":\"EUR\"}]}";
        HttpResponse<String> first = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8080/api/payments/batch"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(batch))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.body()).doesNotContain("\"replayed\"").contains("\"charged\"");
        HttpResponse<String> retry = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8081/api/payments/batch"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(batch))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
        assertThat(retry.body()).doesNotContain("\"charged\"").contains("\"replayed\"");
        assertThat(stat(8080, "charges") + stat(8081, "charges")).as("two items, charged once each").isEqualTo(charges + 2);
    }
}
