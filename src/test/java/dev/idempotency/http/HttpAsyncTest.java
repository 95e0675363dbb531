package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Resources that answer on another thread (a suspended response, a CompletionStage): their answer kept and replayed. */
class HttpAsyncTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(), AsyncResource.class);
    }

    HttpResponse<String> post(String path, String key) throws Exception {
        return server.send(server.request("async/" + path).header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"suspended", "stage"})
    @DisplayName("an answer given on another thread is kept and replayed: the work runs once")
    void anAnswerGivenOnAnotherThreadIsKept(String path) throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post(path, key);
        assertThat(first.statusCode()).isBetween(200, 201);
        assertThat(first.body()).isEqualTo("run 1");
        HttpResponse<String> retry = post(path, key);
        assertThat(retry.statusCode()).isEqualTo(first.statusCode());
        assertThat(retry.body()).isEqualTo("run 1");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions).hasValue(1);
    }
}
