package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** With idempotency.expiry-header set, kept responses and their replays say until when the key is remembered. */
class HttpExpiryTest extends OneServerTest {

    static final String HEADER = "Idempotency-Key-Expires";

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of("idempotency.expiry-header", HEADER, "idempotency.ttl", "PT2H"), PaymentsResource.class);
    }

    HttpResponse<String> post(String path, String key, String body) throws Exception {
        return server.send(server.request(path).header("Idempotency-Key", key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    static Instant expiry(HttpResponse<String> r) {
        String value = r.headers().firstValue(HEADER).orElseThrow(() -> new AssertionError("no " + HEADER + " in " + r.headers()));
        assertThat(value).matches("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT");
        return ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
    }

    @Test
    @DisplayName("the first response and its replay carry the key's expiry (claim + ttl, an HTTP-date); the replay's is the same")
    void keptResponsesAndReplaysSayWhenTheKeyExpires() throws Exception {
        String k = UUID.randomUUID().toString();
        Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        HttpResponse<String> first = post("payments", k, "{\"amount\":1,\"currency\":\"EUR\"}");
        Instant after = Instant.now();
        assertThat(first.statusCode()).isEqualTo(201);
        Instant expires = expiry(first);
        assertThat(expires).isBetween(before.plus(Duration.ofHours(2)).minusSeconds(1), after.plus(Duration.ofHours(2)));
        HttpResponse<String> retry = post("payments", k, "{\"amount\":1,\"currency\":\"EUR\"}");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(expiry(retry)).isEqualTo(expires);
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("a kept 4xx says it too; a released 5xx, a reuse (422) and a missing key (400) do not: nothing is remembered for them")
    void onlyWhatIsKeptCarriesIt() throws Exception {
        HttpResponse<String> kept = post("payments/outcome?status=404", UUID.randomUUID().toString(), "");
        assertThat(kept.statusCode()).isEqualTo(404);
        expiry(kept);
        HttpResponse<String> released = post("payments/outcome?status=503", UUID.randomUUID().toString(), "");
        assertThat(released.statusCode()).isEqualTo(503);
        assertThat(released.headers().firstValue(HEADER)).isEmpty();

        String k = UUID.randomUUID().toString();
        post("payments", k, "{\"amount\":1,\"currency\":\"EUR\"}");
        HttpResponse<String> reused = post("payments", k, "{\"amount\":2,\"currency\":\"EUR\"}");
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.headers().firstValue(HEADER)).isEmpty();
        HttpResponse<String> missing = server.send(server.request("payments").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1,\"currency\":\"EUR\"}")).build());
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.headers().firstValue(HEADER)).isEmpty();
    }
}
