package dev.idempotency.http;

import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atomic claims over HTTP (SPEC A1, A3, A4): the request filter begins the transaction, the resource's
 * business write joins it, the entity is written to bytes by the application's writer, the response is
 * stored, and the transaction commits before those bytes are sent.
 */
class HttpAtomicTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(), LedgerResource.class);
    }

    HttpResponse<byte[]> post(String path, String key) throws Exception {
        return server.sendForBytes(server.request(path).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    static long rows(String sql) {
        return TestDatabase.H2.count(sql);
    }

    @Test
    @DisplayName("A4: the first client and every replay get identical bytes; one business row, one record")
    void identicalBytes() throws Exception {
        long before = rows("select count(*) from test_payment");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post("ledger", key);
        HttpResponse<byte[]> retry = post("ledger", key);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(new String(first.body(), java.nio.charset.StandardCharsets.UTF_8)).contains("ümlaut ✓");
        assertThat(Counters.executions).hasValue(1);
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 1);
    }

    @Test
    @DisplayName("A3: a 5xx answer rolls back the business write and the claim: the retry runs at once")
    void serverErrorLeavesNothing() throws Exception {
        long before = rows("select count(*) from test_payment");
        long records = rows("select count(*) from idempotency_record");
        String key = UUID.randomUUID().toString();
        assertThat(post("ledger?status=503", key).statusCode()).isEqualTo(503);
        assertThat(rows("select count(*) from test_payment")).as("the business row rolled back").isEqualTo(before);
        assertThat(rows("select count(*) from idempotency_record")).as("no trace of the key").isEqualTo(records);
        HttpResponse<byte[]> again = post("ledger?status=503", key);
        assertThat(again.statusCode()).isEqualTo(503);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Counters.executions).hasValue(2);
    }

    /**
     * An exception that no mapper handles ends the request without the response filters or the writer: the transaction
     * the request filter began must still end (rolled back) on the request's thread, or its claim row would stay locked
     * and the thread would carry the transaction into the next request it serves.
     */
    @Test
    @DisplayName("A7: an unmapped exception rolls back the request's transaction: nothing kept, the retry runs at once")
    void unmappedExceptionEndsTheTransaction() throws Exception {
        long before = rows("select count(*) from test_payment");
        long records = rows("select count(*) from idempotency_record");
        String key = UUID.randomUUID().toString();
        assertThat(post("ledger?throw=true", key).statusCode()).isEqualTo(500);
        assertThat(rows("select count(*) from test_payment")).as("the business row rolled back").isEqualTo(before);
        assertThat(rows("select count(*) from idempotency_record")).as("no trace of the key").isEqualTo(records);
        // Every worker thread serves a request: none may still be in the failed request's transaction.
        for (int i = 0; i < 100; i++) {
            assertThat(post("ledger", UUID.randomUUID().toString()).statusCode()).isEqualTo(201);
        }
        HttpResponse<byte[]> retry = post("ledger", key);
        assertThat(retry.statusCode()).as("the key is free at once").isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 101);
    }

    @Test
    @DisplayName("H8 with atomic claims: a kept 4xx commits its work and is replayed")
    void keptClientError() throws Exception {
        long before = rows("select count(*) from test_payment");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post("ledger?status=409", key);
        HttpResponse<byte[]> retry = post("ledger?status=409", key);
        assertThat(retry.statusCode()).isEqualTo(409);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 1);
    }
}
