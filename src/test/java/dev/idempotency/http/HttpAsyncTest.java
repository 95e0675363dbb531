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
        server = HttpTestServer.onH2(Map.of(), AsyncResource.class, BreakingResponseFilter.class);
    }

    HttpResponse<String> post(String path, String key) throws Exception {
        return server.send(server.request("async/" + path).header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"suspended", "suspended-answered-before-return", "stage"})
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

    /**
     * An application's response filter that throws on the thread that answers later: neither the library's response
     * filter nor its writer sees the answer. The claim is settled when the request ends, as for a resource that answers
     * at once (a leased claim whose work committed keeps a 500 without a body): the retry is answered at once, not held
     * off as "in progress" while the claim's heartbeat renews its lease.
     */
    @ParameterizedTest
    @ValueSource(strings = {"suspended", "suspended-answered-before-return", "stage"})
    @DisplayName("an answer given on another thread that a response filter breaks: the claim is settled, the retry answered")
    void anAnswerThatAResponseFilterBreaksIsSettled(String path) throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = server.send(server.request("async/" + path).header("Idempotency-Key", key)
                .header("X-Break-Response", "true").POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(first.statusCode()).isEqualTo(500);
        // The claim is settled once the runtime has processed the answer, which is after the client may have read it:
        // a retry sent at once may still meet the claim ("in progress"); one a moment later is answered. Retried until
        // then, for 10 s at most (the lease's heartbeat would hold it for an hour).
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        HttpResponse<String> retry = post(path, key);
        while (retry.statusCode() == 409 && System.nanoTime() < deadline) {
            retry = post(path, key);
        }
        assertThat(retry.statusCode()).as("the retry: the kept 500, not 409 while a heartbeat renews the claim").isEqualTo(500);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions).as("the work ran once").hasValue(1);
    }
}
