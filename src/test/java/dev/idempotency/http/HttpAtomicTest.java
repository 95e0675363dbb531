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
 * Atomic claims over HTTP: the request filter begins the transaction, the resource's
 * business write joins it, the entity is written to bytes by the application's writer, the response is
 * stored, and the transaction commits before those bytes are sent.
 */
class HttpAtomicTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(), LedgerResource.class, BreakingResponseFilter.class);
    }

    HttpResponse<byte[]> post(String path, String key) throws Exception {
        return server.sendForBytes(server.request(path).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    static long rows(String sql) {
        return TestDatabase.H2.count(sql);
    }

    @Test
    @DisplayName("the first client and every replay get identical bytes; one business row, one record")
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
    @DisplayName("a 5xx answer rolls back the business write and the claim: the retry runs at once")
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
     * The default keeps refusals (a 422 is the answer, replayed) but not those that say "try again" (408, 409, 423, 425,
     * 429): replaying a 429 for the key's whole time to live would refuse a request the server would now take.
     */
    @Test
    @DisplayName("by default a 422 is kept and replayed; a 429 (and 408, 409, 423, 425) frees the key: the retry runs")
    void transientRefusalsAreNotKeptByDefault() throws Exception {
        for (int status : new int[] {408, 409, 423, 425, 429}) {
            String key = UUID.randomUUID().toString();
            int before = Counters.executions.get();
            assertThat(post("ledger?status=" + status, key).statusCode()).isEqualTo(status);
            HttpResponse<byte[]> retry = post("ledger?status=" + status, key);
            assertThat(retry.statusCode()).isEqualTo(status);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("%s is not replayed", status).isEmpty();
            assertThat(Counters.executions.get() - before).as("%s: the retry ran", status).isEqualTo(2);
        }
        String key = UUID.randomUUID().toString();
        int before = Counters.executions.get();
        assertThat(post("ledger?status=422", key).statusCode()).isEqualTo(422);
        HttpResponse<byte[]> retry = post("ledger?status=422", key);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions.get() - before).isEqualTo(1);
    }

    /**
     * The resource's transaction was marked for rollback (by a bean it called, say) and the resource still answered
     * 201: nothing of it commits, so the client must not get the 201 (it would believe it paid); a 4xx goes out as it is.
     */
    @Test
    @DisplayName("a success whose transaction is marked for rollback is answered 500 rolled-back; nothing kept, the retry runs")
    void aSuccessMarkedForRollbackIsNotSentAsASuccess() throws Exception {
        long before = rows("select count(*) from test_payment");
        long records = rows("select count(*) from idempotency_record");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post("ledger?rollbackOnly=true", key);
        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(new String(first.body(), java.nio.charset.StandardCharsets.UTF_8)).contains("/problems/rolled-back");
        assertThat(rows("select count(*) from test_payment")).as("the business row rolled back").isEqualTo(before);
        assertThat(rows("select count(*) from idempotency_record")).as("no trace of the key").isEqualTo(records);
        HttpResponse<byte[]> retry = post("ledger", key);
        assertThat(retry.statusCode()).as("the retry runs, and commits").isEqualTo(201);
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 1);

        String refused = UUID.randomUUID().toString();
        assertThat(post("ledger?rollbackOnly=true&status=422", refused).statusCode()).as("a refusal goes out as it is").isEqualTo(422);
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 1);
    }

    /**
     * An exception that no mapper handles ends the request without the response filters or the writer: the transaction
     * the request filter began must still end (rolled back) on the request's thread, or its claim row would stay locked
     * and the thread would carry the transaction into the next request it serves.
     */
    @Test
    @DisplayName("an unmapped exception rolls back the request's transaction: nothing kept, the retry runs at once")
    void unmappedExceptionEndsTheTransaction() throws Exception {
        leavesNothingOpen(key -> post("ledger?throw=true", key));
    }

    /**
     * A first request answered 500 by {@code fail} keeps nothing (its business row and its claim rolled back), leaves no
     * transaction on any worker thread (each of the next 100 requests, on every thread, commits), and frees its key.
     */
    void leavesNothingOpen(Failing fail) throws Exception {
        long before = rows("select count(*) from test_payment");
        long records = rows("select count(*) from idempotency_record");
        String key = UUID.randomUUID().toString();
        assertThat(fail.send(key).statusCode()).isEqualTo(500);
        assertThat(rows("select count(*) from test_payment")).as("the business row rolled back").isEqualTo(before);
        assertThat(rows("select count(*) from idempotency_record")).as("no trace of the key").isEqualTo(records);
        // Every worker thread serves a request: none may still be in the failed request's transaction.
        for (int i = 0; i < 100; i++) {
            assertThat(post("ledger", UUID.randomUUID().toString()).statusCode()).as("request %s after it", i).isEqualTo(201);
        }
        HttpResponse<byte[]> retry = post("ledger", key);
        assertThat(retry.statusCode()).as("the key is free at once").isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 101);
    }

    interface Failing {
        HttpResponse<byte[]> send(String key) throws Exception;
    }

    /**
     * An application's response filter that runs before the library's and throws: the runtime answers 500 without the
     * library's response filter. The transaction the request filter began must still end on the request's thread (else
     * its claim row stays locked and the thread carries it into the next requests it serves), and nothing is kept.
     */
    @Test
    @DisplayName("a response filter that throws before the library's leaves no claim or transaction open: the retry runs")
    void aResponseFilterThatThrowsLeavesNoClaimOpen() throws Exception {
        leavesNothingOpen(key -> server.sendForBytes(server.request("ledger").header("Idempotency-Key", key)
                .header("X-Break-Response", "true").POST(HttpRequest.BodyPublishers.noBody()).build()));
    }

    @Test
    @DisplayName("with atomic claims, a kept 4xx commits its work and is replayed")
    void keptClientError() throws Exception {
        long before = rows("select count(*) from test_payment");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post("ledger?status=422", key);
        HttpResponse<byte[]> retry = post("ledger?status=422", key);
        assertThat(retry.statusCode()).isEqualTo(422);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(rows("select count(*) from test_payment")).isEqualTo(before + 1);
    }
}
