package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The key from a JSON body field (header first, or body only), fingerprints of chosen fields, 400s for bad bodies. */
class HttpBodyKeyTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(), BodyKeyResource.class);
    }

    HttpResponse<String> post(String path, String key, String body) throws Exception {
        HttpRequest.Builder b = server.request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return server.send(b.build());
    }

    static String order(String id, long amount, String placedAt) {
        return "{\"orderId\":\"" + id + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"placedAt\":\"" + placedAt + "\"}";
    }

    static void assertProblem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"type\":\"https://idempotency.dev/problems/" + type + "\"");
    }

    @Test
    @DisplayName("No header: the key is the body's /orderId; a retry with another placedAt replays; another amount is 422")
    void theKeyFromTheBodyAndAFingerprintOfChosenFields() throws Exception {
        String id = UUID.randomUUID().toString();
        HttpResponse<String> first = post("orders", null, order(id, 100, "10:00:00"));
        assertThat(first.body()).isEqualTo("run 1");
        HttpResponse<String> retry = post("orders", null, order(id, 100, "10:00:05"));
        assertThat(retry.body()).isEqualTo("run 1");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        HttpResponse<String> reordered = post("orders", null,
                "{\"currency\":\"EUR\",\"nonce\":7,\"amount\":100,\"orderId\":\"" + id + "\"}");
        assertThat(reordered.body()).as("other fields and their order do not count").isEqualTo("run 1");
        assertProblem(post("orders", null, order(id, 999, "10:00:09")), 422, "key-reused");
        assertThat(post("orders", null, "{\"orderId\":42,\"amount\":1,\"currency\":\"EUR\"}").body()).as("a number is a key").isEqualTo("run 2");
        assertThat(Counters.executions).hasValue(2);
    }

    @Test
    @DisplayName("Header first: a header's key wins over the body's field, and names the same record as that key in a body")
    void theHeaderComesFirst() throws Exception {
        String k = UUID.randomUUID().toString();
        assertThat(post("orders", k, order("ignored-" + k, 100, "t1")).body()).isEqualTo("run 1");
        HttpResponse<String> viaBody = post("orders", null, order(k, 100, "t2"));
        assertThat(viaBody.body()).isEqualTo("run 1");
        assertThat(viaBody.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    }

    @Test
    @DisplayName("Body only: the header is ignored; the key is /order/id")
    void bodyOnly() throws Exception {
        String id = UUID.randomUUID().toString();
        String body = "{\"order\":{\"id\":\"" + id + "\"},\"amount\":3}";
        assertThat(post("orders/body-only", "header-1", body).body()).isEqualTo("run 1");
        assertThat(post("orders/body-only", "header-2", body).body()).isEqualTo("run 1");
        HttpResponse<String> missing = post("orders/body-only", "header-3", "{\"amount\":3}");
        assertProblem(missing, 400, "key-missing");
        assertThat(missing.body()).contains("/order/id").doesNotContain("Idempotency-Key");
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("Malformed JSON, a missing key field, a key that is not a string, a missing fingerprint field: 400 problem+json, nothing runs")
    void badBodiesAre400() throws Exception {
        assertProblem(post("orders", null, "{\"amount\":1,"), 400, "body-invalid");
        assertProblem(post("orders", UUID.randomUUID().toString(), "{\"amount\":1,"), 400, "body-invalid");
        assertProblem(post("orders", null, ""), 400, "body-invalid");
        HttpResponse<String> noKey = post("orders", null, "{\"amount\":1,\"currency\":\"EUR\"}");
        assertProblem(noKey, 400, "key-missing");
        assertThat(noKey.body()).contains("Idempotency-Key").contains("/orderId");
        assertProblem(post("orders", null, "{\"orderId\":{\"a\":1},\"amount\":1,\"currency\":\"EUR\"}"), 400, "key-invalid");
        HttpResponse<String> noCurrency = post("orders", null, "{\"orderId\":\"o-1\",\"amount\":1}");
        assertProblem(noCurrency, 400, "body-field-missing");
        assertThat(noCurrency.body()).contains("/currency");
        assertThat(Counters.executions).hasValue(0);
    }

    @Test
    @DisplayName("required = false: a body without the key field runs unprotected")
    void optionalBodyKey() throws Exception {
        assertThat(post("orders/optional", null, "{\"amount\":1}").body()).isEqualTo("run 1");
        assertThat(post("orders/optional", null, "{\"amount\":1}").body()).isEqualTo("run 2");
        String id = UUID.randomUUID().toString();
        assertThat(post("orders/optional", null, "{\"orderId\":\"" + id + "\"}").body()).isEqualTo("run 3");
        assertThat(post("orders/optional", null, "{\"orderId\":\"" + id + "\"}").body()).isEqualTo("run 3");
    }
}
