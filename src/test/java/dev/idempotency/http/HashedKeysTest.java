package dev.idempotency.http;

import dev.idempotency.IdempotencyManager;
import dev.idempotency.RequestKey;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.TestDatabase;

import jakarta.enterprise.inject.spi.CDI;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys hashed at rest, {@code idempotency.store-keys=hashed}: the three doors (the HTTP filter, the interceptor, the
 * manager) behave as with plain keys, and neither the table nor the export file holds a client's key or a caller's
 * name.
 */
class HashedKeysTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of("idempotency.store-keys", "hashed"),
                PaymentsResource.class, CommandResource.class);
    }

    HttpResponse<String> pay(String key, String user, long amount) throws Exception {
        return server.send(server.request("payments").header("Idempotency-Key", key).header("Content-Type", "application/json")
                .header("Authorization", BasicAuthFilter.basic(user))
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":" + amount + ",\"currency\":\"EUR\"}")).build());
    }

    HttpResponse<String> order(String orderId, long amount) throws Exception {
        return server.send(server.request("commands").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}"))
                .build());
    }

    static IdempotencyManager manager() {
        return CDI.current().select(IdempotencyManager.class).get();
    }

    /** Every row's namespace, principal and key (and its id): what an operator reads in the table. */
    static List<List<String>> rows() throws Exception {
        List<List<String>> rows = new ArrayList<>();
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, namespace, principal, idem_key, fingerprint, owner FROM idempotency_record")) {
            while (rs.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= 6; i++) {
                    row.add(rs.getString(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    @Test
    @DisplayName("every door answers as with plain keys; the table and the export hold digests, no key and no principal; an export imports back")
    void theDoorsWorkAndNothingRawIsKept(@TempDir Path dir) throws Exception {
        String key = "pay-" + UUID.randomUUID();
        String orderId = "order-" + UUID.randomUUID();
        String requestId = "request-" + UUID.randomUUID();

        // HTTP: a retry replays, a reuse with another body is 422, another caller's same key is its own request.
        HttpResponse<String> first = pay(key, "alice", 100);
        assertThat(first.statusCode()).isEqualTo(201);
        HttpResponse<String> retry = pay(key, "alice", 100);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(pay(key, "alice", 999).statusCode()).isEqualTo(422);
        HttpResponse<String> bob = pay(key, "bob", 100);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(bob.body()).contains("\"owner\":\"bob\"");
        assertThat(Counters.executions).as("alice once, bob once").hasValue(2);

        // The interceptor (a key inside the command): one run, the same answer, a reuse refused.
        HttpResponse<String> placed = order(orderId, 5);
        assertThat(placed.statusCode()).isEqualTo(200);
        assertThat(order(orderId, 5).body()).isEqualTo(placed.body());
        assertThat(order(orderId, 6).statusCode()).isEqualTo(422);
        assertThat(Counters.executions).hasValue(3);

        // The manager: stored, detected and read back by the caller's own id.
        IdempotencyManager m = manager();
        assertThat(m.check(RequestKey.of(requestId)).seen()).isFalse();
        m.store(RequestKey.of(requestId), "the answer".getBytes(StandardCharsets.UTF_8));
        assertThat(m.check(RequestKey.of(requestId)).seen()).isTrue();
        assertThat(new String(m.retrieve(RequestKey.of(requestId)), StandardCharsets.UTF_8)).isEqualTo("the answer");

        // At rest: digests only.
        List<String> raw = List.of(key, orderId, requestId, "alice", "bob", "anonymous");
        List<List<String>> rows = rows();
        assertThat(rows).hasSizeGreaterThanOrEqualTo(5);
        for (List<String> row : rows) {
            assertThat(row.get(2)).as("principal of %s", row).isEmpty();
            assertThat(row.get(3)).as("key of %s", row).matches("[0-9a-f]{64}");
            for (String value : row) {
                for (String r : raw) {
                    assertThat(value == null ? "" : value).as("a column of %s", row).doesNotContain(r);
                }
            }
        }
        assertThat(rows).extracting(r -> r.get(3)).as("alice's key, as the HTTP door keeps it")
                .contains(new ScopedKey(PaymentsResource.class.getName() + "#create(PaymentRequest,UriInfo)", "alice", key).id());

        Path file = dir.resolve("export.jsonl");
        int exported = m.export(file);
        assertThat(exported).isEqualTo(rows.size());
        String text = Files.readString(file);
        for (String r : raw) {
            assertThat(text).as("the export").doesNotContain(r);
        }
        assertThat(text).doesNotContain("\"principal\":\"alice\"").contains("\"principal\":\"\"");

        // Forgotten (table and cache), imported back: every door replays again, nothing runs.
        m.clear();
        m.flushCache();
        assertThat(m.importFrom(file)).isEqualTo(exported);
        assertThat(pay(key, "alice", 100).headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(order(orderId, 5).body()).isEqualTo(placed.body());
        assertThat(new String(m.retrieve(RequestKey.of(requestId)), StandardCharsets.UTF_8)).isEqualTo("the answer");
        assertThat(Counters.executions).hasValue(3);
    }
}
