package dev.idempotency.http;

import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.testing.TestDatabase;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** A store unreachable (503, or fail open) and per-method HTTP options through the configuration's overrides. */
class HttpOptionsTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        Map<String, String> config = new HashMap<>();
        config.put(PaymentsResource.class.getName() + "/outcome/Idempotent/keepStatus", "2xx");
        config.put("Idempotent/maxResponseSize", "50");
        server = HttpTestServer.onH2(config, PaymentsResource.class);
    }

    HttpResponse<String> post(String path, String key) throws Exception {
        return server.send(server.request(path).header("Idempotency-Key", key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1,\"currency\":\"EUR\"}")).build());
    }

    static void dropTheTable() throws Exception {
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE idempotency_record");
        }
    }

    static void restoreTheTable() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(TestDatabase.H2.url);
        ds.setUser(TestDatabase.H2.user);
        JpaSchema.createIfMissing(ds);
    }

    @Test
    @DisplayName("store unreachable: 503 problem+json with Retry-After, and the resource does not run")
    void storeDownFailsClosed() throws Exception {
        dropTheTable();
        try {
            HttpResponse<String> r = post("payments", UUID.randomUUID().toString());
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
            assertThat(r.body()).contains("https://idempotency.dev/problems/store-unavailable");
            assertThat(r.headers().firstValueAsLong("Retry-After")).hasValue(5L);
            assertThat(Counters.executions).hasValue(0);
        } finally {
            restoreTheTable();
        }
        assertThat(post("payments", UUID.randomUUID().toString()).statusCode()).isEqualTo(201);
    }

    @Test
    @DisplayName("fail open, per method: the resource runs unprotected while the store is down")
    void storeDownFailsOpen() throws Exception {
        dropTheTable();
        try {
            String k = UUID.randomUUID().toString();
            assertThat(post("payments/fail-open", k).body()).isEqualTo("run 1");
            assertThat(post("payments/fail-open", k).body()).isEqualTo("run 2");
        } finally {
            restoreTheTable();
        }
    }

    @Test
    @DisplayName("a per-method override for HTTP: <fqcn>/<method>/Idempotent/keepStatus=2xx makes a 404 release the key")
    void keepStatusOverride() throws Exception {
        String k = UUID.randomUUID().toString();
        assertThat(post("payments/outcome?status=404", k).body()).isEqualTo("{\"attempt\":1}");
        assertThat(post("payments/outcome?status=404", k).body()).isEqualTo("{\"attempt\":2}");
    }

    @Test
    @DisplayName("an override for HTTP: Idempotent/maxResponseSize applies to every method")
    void maxResponseSizeOverride() throws Exception {
        String k = UUID.randomUUID().toString();
        HttpResponse<String> first = post("payments", k);
        assertThat(first.body().length()).isGreaterThan(50);
        HttpResponse<String> retry = post("payments", k);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEmpty();
        assertThat(first.headers().firstValue("Idempotency-Key-Expires")).as("the expiry header is opt-in").isEmpty();
        assertThat(retry.headers().firstValue("Idempotency-Key-Expires")).isEmpty();
        assertThat(Counters.executions).hasValue(1);
    }
}
