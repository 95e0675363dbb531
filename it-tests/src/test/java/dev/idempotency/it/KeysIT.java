package dev.idempotency.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Issue 19 in the server, through the example: anonymous clients' scopes, keys inside commands, keys from the body. */
class KeysIT extends ServerIT {

    @Deployment(testable = false)
    static WebArchive deployment() {
        return exampleWithTestBeans();
    }

    static String key() {
        return UUID.randomUUID().toString();
    }

    static final String ORDER = "{\"orderId\":\"%s\",\"amount\":1200,\"currency\":\"EUR\",\"placedAt\":\"%s\"}";

    static void assertProblem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"type\":\"" + type + "\"");
    }

    @Test
    @DisplayName("POST /api/orders scopes anonymous keys by X-Client-Id: without it 401; two clients with one key pay twice, each replays its own")
    void anonymousClientsHaveScopesOfTheirOwn() throws Exception {
        long payments = stat("payments");
        String k = key();
        String order = String.format(ORDER, "o-" + k, "2026-11-23T10:00:00Z");
        assertProblem(send(postJson("api/orders", k, order)), 401, "https://idempotency.dev/problems/unauthenticated");
        assertThat(stat("payments")).isEqualTo(payments);

        HttpResponse<String> a = send(postJson("api/orders", k, order).header("X-Client-Id", "shop-a"));
        HttpResponse<String> b = send(postJson("api/orders", k, order).header("X-Client-Id", "shop-b"));
        assertThat(a.statusCode()).isEqualTo(201);
        assertThat(b.statusCode()).isEqualTo(201);
        assertThat(b.body()).isNotEqualTo(a.body());
        HttpResponse<String> retryA = send(postJson("api/orders", k, order).header("X-Client-Id", "shop-a"));
        assertThat(retryA.body()).isEqualTo(a.body());
        assertThat(retryA.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        HttpResponse<String> alice = send(postJson("api/orders", k, order).header("Authorization", basic("alice")));
        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(alice.body()).isNotEqualTo(a.body()).isNotEqualTo(b.body());
        assertThat(stat("payments")).isEqualTo(payments + 3);
    }

    static String transfer(String id, long amount) {
        return "{\"transferId\":\"" + id + "\",\"amount\":" + amount + ",\"from\":\"alice\",\"to\":\"bob\"}";
    }

    @Test
    @DisplayName("POST /api/transfers: the key is inside the service's TransferCommand; its retry replays, another amount is 422")
    void theKeyInsideTheCommand() throws Exception {
        long transfers = stat("transfers");
        String id = "tr-" + key();
        HttpResponse<String> first = send(postJson("api/transfers", null, transfer(id, 250)));
        HttpResponse<String> again = send(postJson("api/transfers", null, transfer(id, 250)));
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(again.body()).isEqualTo(first.body()).contains(id);
        assertThat(stat("transfers")).isEqualTo(transfers + 1);
        assertProblem(send(postJson("api/transfers", null, transfer(id, 999))), 422, "https://idempotency.dev/problems/key-reused");
        assertThat(stat("transfers")).isEqualTo(transfers + 1);
    }

    @Test
    @DisplayName("POST /api/orders without a header: the key is the body's orderId; another placedAt replays, another amount is 422, bad bodies 400")
    void theKeyFromTheBody() throws Exception {
        long payments = stat("payments");
        long charges = stat("charges");
        String id = "o-" + key();
        HttpResponse<String> first = send(postJson("api/orders", null, String.format(ORDER, id, "10:00:00")).header("X-Client-Id", "shop-a"));
        assertThat(first.statusCode()).isEqualTo(201);
        HttpResponse<String> retry = send(postJson("api/orders", null, String.format(ORDER, id, "10:00:07")).header("X-Client-Id", "shop-a"));
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertProblem(send(postJson("api/orders", null, String.format(ORDER, id, "10:00:09").replace("1200", "999"))
                .header("X-Client-Id", "shop-a")), 422, "https://idempotency.dev/problems/key-reused");
        assertProblem(send(postJson("api/orders", null, "{\"orderId\":\"x\",").header("X-Client-Id", "shop-a")), 400,
                "https://idempotency.dev/problems/body-invalid");
        assertProblem(send(postJson("api/orders", null, "{\"amount\":1,\"currency\":\"EUR\"}").header("X-Client-Id", "shop-a")), 400,
                "https://idempotency.dev/problems/key-missing");
        assertThat(stat("payments")).isEqualTo(payments + 1);
        assertThat(stat("charges")).isEqualTo(charges + 1);
    }
}
