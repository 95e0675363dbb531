package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** A key inside the command, over HTTP, on the JPA store with JTA: a JSON command carries its own key to an @Idempotent service. */
class HttpKeyInsideTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(), CommandResource.class);
    }

    HttpResponse<String> post(String id, long amount) throws Exception {
        return server.send(server.request("commands").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"orderId\":\"" + id + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}"))
                .build());
    }

    @Test
    @DisplayName("the command's orderId is the key: a retried command runs once and answers the same; another amount is a reuse")
    void theKeyInsideTheCommand() throws Exception {
        String id = UUID.randomUUID().toString();
        HttpResponse<String> first = post(id, 700);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).contains("\"run\":1").contains(id);
        assertThat(post(id, 700).body()).isEqualTo(first.body());
        assertThat(post(id, 701).statusCode()).isEqualTo(422);
        assertThat(post(UUID.randomUUID().toString(), 700).body()).contains("\"run\":2");
        assertThat(Counters.executions).hasValue(2);
    }
}
