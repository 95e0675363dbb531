package dev.idempotency.helidon;

import io.helidon.microprofile.testing.junit5.HelidonTest;

import jakarta.inject.Inject;
import jakarta.ws.rs.client.WebTarget;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code Idempotency-Key} filter on Helidon MP (Jersey on Helidon's web server, which finds the filter as a bean):
 * a replay is byte for byte the first response; another request under the key is 422, a key still running 409, a
 * malformed or missing key 400, and nothing runs for any of them. The atomic claim's transaction is the resource's:
 * begun by the request filter, seen by the resource, ended after the response was written (a rollback there leaves
 * nothing).
 */
@HelidonTest
class HelidonHttpTest {

    @Inject
    WebTarget server;

    private URI payments;

    @org.junit.jupiter.api.BeforeEach
    void locate() {
        payments = server.path("payments").getUri();
    }

    @Inject
    Ledger ledger;

    private final HttpClient http = HttpClient.newHttpClient();

    private static String reference() {
        return "http-" + UUID.randomUUID();
    }

    private static String body(String reference, long amount, boolean fail) {
        return "{\"reference\":\"" + reference + "\",\"amount\":" + amount + ",\"fail\":" + fail + "}";
    }

    private HttpResponse<byte[]> post(URI uri, String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aRetryIsTheFirstResponseByteForByte() throws Exception {
        String ref = reference();
        HttpResponse<byte[]> first = post(payments, ref, body(ref, 10, false));
        assertEquals(201, first.statusCode(), () -> text(first));
        assertEquals("1", first.headers().firstValue("X-Claim-Records").orElse(""),
                "the resource ran in the claim's transaction: the request filter's, which wrote the key's record");
        assertEquals("true", first.headers().firstValue("X-In-Transaction").orElse(""));
        for (int i = 0; i < 3; i++) {
            HttpResponse<byte[]> again = post(payments, ref, body(ref, 10, false));
            assertEquals(201, again.statusCode());
            assertArrayEquals(first.body(), again.body(), "the stored body, byte for byte");
            assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(""));
        }
        assertEquals(1, ledger.rows(ref));
        assertEquals(1, ledger.runs(ref));
    }

    @Test
    void anotherRequestUnderTheKeyIs422() throws Exception {
        String ref = reference();
        assertEquals(201, post(payments, ref, body(ref, 10, false)).statusCode());
        HttpResponse<byte[]> reused = post(payments, ref, body(ref, 11, false));
        assertEquals(422, reused.statusCode());
        assertEquals("application/problem+json", reused.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        assertTrue(text(reused).contains("key-reused"), () -> text(reused));
        assertEquals(1, ledger.runs(ref));
    }

    @Test
    void aKeyStillRunningIs409() throws Exception {
        String ref = reference();
        CountDownLatch running = ledger.hold(ref);
        CompletableFuture<HttpResponse<byte[]>> first = http.sendAsync(HttpRequest.newBuilder(payments)
                .header("Content-Type", "application/json").header("Idempotency-Key", ref)
                .POST(HttpRequest.BodyPublishers.ofString(body(ref, 20, false))).build(), HttpResponse.BodyHandlers.ofByteArray());
        try {
            assertTrue(running.await(30, TimeUnit.SECONDS), "the first request runs");
            HttpResponse<byte[]> duplicate = post(payments, ref, body(ref, 20, false));
            assertEquals(409, duplicate.statusCode(), () -> text(duplicate));
            assertTrue(text(duplicate).contains("request-in-progress"), () -> text(duplicate));
            assertTrue(duplicate.headers().firstValue("Retry-After").isPresent());
        } finally {
            ledger.release(ref);
        }
        HttpResponse<byte[]> answered = first.get(30, TimeUnit.SECONDS);
        assertEquals(201, answered.statusCode());
        assertArrayEquals(answered.body(), post(payments, ref, body(ref, 20, false)).body());
        assertEquals(1, ledger.runs(ref));
        assertEquals(1, ledger.rows(ref));
    }

    @Test
    void aMalformedOrMissingKeyIs400AndNothingRuns() throws Exception {
        String ref = reference();
        HttpResponse<byte[]> tooLong = post(payments, "k".repeat(256), body(ref, 5, false));
        assertEquals(400, tooLong.statusCode());
        assertTrue(text(tooLong).contains("key-invalid"), () -> text(tooLong));
        HttpResponse<byte[]> missing = post(payments, null, body(ref, 5, false));
        assertEquals(400, missing.statusCode());
        assertTrue(text(missing).contains("key-missing"), () -> text(missing));
        assertEquals(0, ledger.runs(ref));
    }

    @Test
    void aResponseNotKeptRollsTheAtomicClaimBackWithTheResourcesWrite() throws Exception {
        String ref = reference();
        HttpResponse<byte[]> failed = post(payments, ref, body(ref, 30, true));
        assertEquals(502, failed.statusCode());
        assertEquals(0, ledger.rows(ref), "the resource's row rolled back with the claim");
        assertEquals(0, ledger.records(ref), "nothing of the key was kept");
        HttpResponse<byte[]> retried = post(payments, ref, body(ref, 30, false));
        assertEquals(201, retried.statusCode());
        assertEquals(2, ledger.runs(ref), "the retry ran");
        assertEquals(1, ledger.rows(ref));
    }

    @Test
    void theLeasedDoorReplaysToo() throws Exception {
        String ref = reference();
        URI leased = URI.create(payments + "/leased");
        HttpResponse<byte[]> first = post(leased, ref, body(ref, 8, false));
        assertEquals(201, first.statusCode(), () -> text(first));
        HttpResponse<byte[]> again = post(leased, ref, body(ref, 8, false));
        assertArrayEquals(first.body(), again.body());
        assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(""));
        assertEquals(1, ledger.rows(ref));
    }
}
