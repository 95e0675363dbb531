package dev.idempotency.http;

import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code Idempotency-Key} header (the guide's HTTP page, docs/http.adoc) over real HTTP: JDK HttpClient against
 * RESTEasy on Undertow with Weld, the library's JPA store on H2 with Narayana JTA. One test (or more) per behaviour.
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class HttpIdempotencyTest {

    static HttpTestServer server;

    /** The configuration of this run: the default claim (atomic, with Narayana present); the leased subclass overrides it. */
    Map<String, String> config() {
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.lease", "PT30S");
        return config;
    }

    @BeforeAll
    void start() throws Exception {
        server = HttpTestServer.onH2(config(), PaymentsResource.class, PlainResource.class, ItemsResource.class,
                BreakingResponseFilter.class, RefusingRequestFilter.class);
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void reset() {
        Counters.reset();
    }

    static String key() {
        return UUID.randomUUID().toString();
    }

    static final String BODY = "{\"amount\":1000,\"currency\":\"EUR\"}";

    HttpRequest.Builder post(String path, String key, String body) {
        HttpRequest.Builder b = server.request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return server.send(b.build());
    }

    /**
     * A request written byte by byte, because the JDK client turns a non-ASCII header value into '?': the key
     * goes out in UTF-8, as a careless client would send it. Returns the status line and the body.
     */
    static String rawPost(String path, String key, String body) throws Exception {
        try (java.net.Socket socket = new java.net.Socket(server.base.getHost(), server.base.getPort())) {
            socket.setSoTimeout(30_000);
            byte[] content = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            String head = "POST /" + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + content.length + "\r\n"
                    + "Idempotency-Key: " + key + "\r\n\r\n";
            socket.getOutputStream().write(head.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            socket.getOutputStream().write(content);
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    static void assertProblem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"type\":\"https://idempotency.dev/problems/" + type + "\"").contains("\"status\":" + status);
    }

    /**
     * The response's writer fails after the resource ran. With a leased claim the resource's work has committed on its
     * own: the key keeps the status and headers (no body), and a retry is replayed them instead of running the work
     * again. With an atomic or optimistic claim the work rolls back with the transaction, and the retry runs it.
     */
    @Test
    @DisplayName("a response whose writer fails: leased keeps its status (the retry never runs it again); atomic rolls back")
    void aResponseWhoseWriterFails() throws Exception {
        String key = java.util.UUID.randomUUID().toString();
        assertThat(send(post("payments/unwritable", key, BODY)).statusCode()).isEqualTo(500);
        HttpResponse<String> retry = send(post("payments/unwritable", key, BODY));
        if ("leased".equals(config().get("idempotency.claim"))) {
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            assertThat(retry.body()).isEmpty();
            assertThat(Counters.executions).as("the resource ran once").hasValue(1);
        } else {
            assertThat(retry.statusCode()).isEqualTo(500);
            assertThat(Counters.executions).as("nothing was kept: the retry ran").hasValue(2);
        }
    }

    /**
     * An application's response filter that runs before the library's throws: neither the library's response filter nor
     * its writer sees the response. The claim is settled when the request ends: atomic and optimistic roll the work back
     * and free the key; leased (the work committed) keeps a 500 without a body. Either way no key stays held and no
     * transaction stays open on the request's thread: every later request is answered.
     */
    @Test
    @DisplayName("a response filter that throws before the library's: the claim is settled at the request's end, never left open")
    void aResponseFilterThatThrows() throws Exception {
        String key = java.util.UUID.randomUUID().toString();
        assertThat(send(post("payments", key, BODY).header("X-Break-Response", "true")).statusCode()).isEqualTo(500);
        for (int i = 0; i < 40; i++) {
            assertThat(send(post("payments", key(), BODY)).statusCode()).as("request %s after it", i).isEqualTo(201);
        }
        HttpResponse<String> retry = send(post("payments", key, BODY));
        if ("leased".equals(config().get("idempotency.claim"))) {
            assertThat(retry.statusCode()).isEqualTo(500);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            assertThat(Counters.executions).as("the resource ran once for the key").hasValue(41);
        } else {
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
            assertThat(Counters.executions).as("nothing was kept: the retry ran").hasValue(42);
        }
    }

    /**
     * An application's request filter refuses the request (a rate limiter's 429, an authorisation check's 403) before
     * the resource runs: that refusal is not the resource's answer and must not be bound to the key. The library's
     * request filter runs after the application's, so it never claimed the key: the retry that is let through runs.
     */
    @Test
    @DisplayName("a 403 or 429 from an application's request filter is not bound to the key: the retry let through runs")
    void aRefusalFromAnotherRequestFilterIsNotBoundToTheKey() throws Exception {
        for (String status : new String[] {"403", "429"}) {
            String key = key();
            assertThat(send(post("payments", key, BODY).header("X-Refuse", status)).statusCode()).isEqualTo(Integer.parseInt(status));
            HttpResponse<String> retry = send(post("payments", key, BODY));
            assertThat(retry.statusCode()).as("after a %s", status).isEqualTo(201);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        }
        assertThat(Counters.executions).hasValue(2);
    }

    // --------------------------------------------------------------------- the key: missing, malformed

    @Test
    @DisplayName("H2: no key where one is required: 400 problem+json, nothing runs")
    void missingKey() throws Exception {
        assertProblem(send(post("payments", null, BODY)), 400, "key-missing");
        assertThat(Counters.executions).hasValue(0);
    }

    @Test
    @DisplayName("H2: required = false lets a request without a key through, unprotected")
    void optionalKey() throws Exception {
        assertThat(send(post("payments/optional", null, "")).body()).isEqualTo("run 1");
        assertThat(send(post("payments/optional", null, "")).body()).isEqualTo("run 2");
    }

    @Test
    @DisplayName("empty, 256-character and non-ASCII keys: 400 problem+json, nothing runs")
    void malformedKeys() throws Exception {
        assertProblem(send(post("payments", "", BODY)), 400, "key-invalid");
        assertProblem(send(post("payments", "k".repeat(256), BODY)), 400, "key-invalid");
        assertThat(rawPost("payments", "clé-" + key(), BODY)).startsWith("HTTP/1.1 400").contains("key-invalid");
        assertThat(Counters.executions).hasValue(0);
        assertThat(send(post("payments", "k".repeat(255), BODY)).statusCode()).isEqualTo(201);
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("the draft's structured-field string (\"key\") is the same key as the bare token")
    void quotedKey() throws Exception {
        String k = key();
        HttpResponse<String> first = send(post("payments", "\"" + k + "\"", BODY));
        HttpResponse<String> again = send(post("payments", k, BODY));
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(Counters.executions).hasValue(1);
    }

    // ----------------------------------------------------------------------- first request and its retry

    @Test
    @DisplayName("the retry gets the same status, body bytes and Location, marked replayed; nothing runs again")
    void replay() throws Exception {
        String k = key();
        HttpResponse<byte[]> first = server.sendForBytes(post("payments", k, BODY).build());
        HttpResponse<byte[]> retry = server.sendForBytes(post("payments", k, BODY).build());
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location")).isPresent();
        assertThat(retry.headers().firstValue("ETag")).isEqualTo(first.headers().firstValue("ETag")).isPresent();
        assertThat(retry.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/json"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("the resource is a CDI bean under the @Idempotent interceptor too, and the key is claimed once")
    void claimedOnce() throws Exception {
        String k = key();
        assertThat(send(post("payments", k, BODY)).statusCode()).isEqualTo(201);
        assertThat(TestDatabase.H2.count("select attempts from idempotency_record where idem_key = '" + k + "'")).isEqualTo(1);
        assertThat(TestDatabase.H2.count("select count(*) from idempotency_record where idem_key = '" + k + "'")).isEqualTo(1);
    }

    // ---------------------------------------------------------------------- another request with the key

    @Test
    @DisplayName("the same key on the same operation with another body, path or query: 422 problem+json, nothing runs")
    void keyReused() throws Exception {
        String k = key();
        send(post("payments", k, BODY));
        HttpResponse<String> other = send(post("payments", k, "{\"amount\":2000,\"currency\":\"EUR\"}"));
        assertProblem(other, 422, "key-reused");
        assertThat(other.body()).doesNotContain("2000").doesNotContain(k);
        assertProblem(send(post("payments?x=1", k, BODY)), 422, "key-reused");
        assertThat(Counters.executions).hasValue(1);
        String put = key();
        send(server.request("items/1").header("Idempotency-Key", put).PUT(HttpRequest.BodyPublishers.ofString("v")));
        assertProblem(send(server.request("items/2").header("Idempotency-Key", put).PUT(HttpRequest.BodyPublishers.ofString("v"))),
                422, "key-reused");
        assertThat(Counters.executions).hasValue(2);
    }

    // ----------------------------------------------------------------------------- concurrent duplicates

    @Test
    @DisplayName("32 concurrent requests with one key: one execution, every other one 409 with Retry-After")
    void concurrentReject() throws Exception {
        String k = key();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            responses.add(server.client.sendAsync(post("payments/slow", k, BODY).build(), HttpResponse.BodyHandlers.ofString()));
        }
        // The first holds the key until 31 others have been answered 409.
        int conflicts = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (conflicts < 31) {
            assertThat(System.nanoTime()).as("31 conflicts in time").isLessThan(deadline);
            conflicts = (int) responses.stream().filter(f -> f.isDone() && f.join().statusCode() == 409).count();
            Thread.onSpinWait();
        }
        Counters.slow.countDown();
        int created = 0;
        for (CompletableFuture<HttpResponse<String>> f : responses) {
            HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
            if (r.statusCode() == 409) {
                assertProblem(r, 409, "request-in-progress");
                assertThat(r.headers().firstValueAsLong("Retry-After").orElseThrow()).isBetween(1L, 5L);
            } else {
                assertThat(r.statusCode()).isEqualTo(201);
                created++;
            }
        }
        assertThat(created).isEqualTo(1);
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("in wait mode, 32 concurrent requests: one execution, 31 replays of its response")
    void concurrentWait() throws Exception {
        String k = key();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            responses.add(server.client.sendAsync(post("payments/slow-wait", k, BODY).build(), HttpResponse.BodyHandlers.ofString()));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (Counters.arrivals.get() == 0) { // the first is in the resource method
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.onSpinWait();
        }
        // ... and duplicates wait for it (as many as the server has request threads for), before it is let go.
        var signals = jakarta.enterprise.inject.spi.CDI.current().select(dev.idempotency.runtime.IdempotencyRuntime.class).get().signals();
        while (signals.waiters() == 0) {
            assertThat(System.nanoTime()).as("a duplicate waits").isLessThan(deadline);
            Thread.onSpinWait();
        }
        Counters.slow.countDown();
        String firstBody = null;
        int replays = 0;
        for (CompletableFuture<HttpResponse<String>> f : responses) {
            HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(201);
            if (firstBody == null) {
                firstBody = r.body();
            }
            assertThat(r.body()).isEqualTo(firstBody);
            if (r.headers().firstValue("Idempotent-Replayed").isPresent()) {
                replays++;
            }
        }
        assertThat(replays).isEqualTo(31);
        assertThat(Counters.executions).hasValue(1);
    }

    // ------------------------------------------------------------------------ outcomes kept and released

    @Test
    @DisplayName("a 500 releases the key and the retry runs again")
    void serverErrorReleases() throws Exception {
        String k = key();
        assertThat(send(post("payments/outcome?status=500", k, "")).statusCode()).isEqualTo(500);
        HttpResponse<String> retry = send(post("payments/outcome?status=500", k, ""));
        assertThat(retry.body()).isEqualTo("{\"attempt\":2}");
        assertThat(Counters.executions).hasValue(2);
    }

    @Test
    @DisplayName("an exception releases the key and the retry runs again")
    void exceptionReleases() throws Exception {
        String k = key();
        assertThat(send(post("payments/outcome?status=200&throw=true", k, "")).statusCode()).isEqualTo(500);
        assertThat(send(post("payments/outcome?status=200&throw=true", k, "")).statusCode()).isEqualTo(500);
        assertThat(Counters.executions).hasValue(2);
    }

    @Test
    @DisplayName("a 4xx is kept and replayed")
    void clientErrorKept() throws Exception {
        String k = key();
        assertThat(send(post("payments/outcome?status=404", k, "")).statusCode()).isEqualTo(404);
        HttpResponse<String> retry = send(post("payments/outcome?status=404", k, ""));
        assertThat(retry.statusCode()).isEqualTo(404);
        assertThat(retry.body()).isEqualTo("{\"attempt\":1}");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions).hasValue(1);
    }

    // ----------------------------------------------------------------------------------- keys per caller

    @Test
    @DisplayName("two principals with the same key both execute and each replays only their own result")
    void principals() throws Exception {
        String k = key();
        HttpResponse<String> alice = send(post("payments", k, BODY).header("Authorization", BasicAuthFilter.basic("alice")));
        HttpResponse<String> bob = send(post("payments", k, BODY).header("Authorization", BasicAuthFilter.basic("bob")));
        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(alice.body()).contains("\"owner\":\"alice\"");
        assertThat(bob.body()).contains("\"owner\":\"bob\"");
        assertThat(Counters.executions).hasValue(2);
        assertThat(send(post("payments", k, BODY).header("Authorization", BasicAuthFilter.basic("alice"))).body()).isEqualTo(alice.body());
        assertThat(send(post("payments", k, BODY).header("Authorization", BasicAuthFilter.basic("bob"))).body()).isEqualTo(bob.body());
        assertThat(Counters.executions).hasValue(2);
    }

    // ------------------------------------------------------------------- replayed headers, the size cap

    @Test
    @DisplayName("Set-Cookie and other headers outside the allow-list are not replayed")
    void replayedHeaders() throws Exception {
        String k = key();
        HttpResponse<String> first = send(post("payments", k, BODY));
        assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
        assertThat(first.headers().firstValue("X-Trace")).isPresent();
        HttpResponse<String> retry = send(post("payments", k, BODY));
        assertThat(retry.headers().firstValue("Set-Cookie")).isEmpty();
        assertThat(retry.headers().firstValue("X-Trace")).isEmpty();
        assertThat(retry.headers().firstValue("Location")).isPresent();
    }

    @Test
    @DisplayName("a body over the cap is never run twice; its retry gets status and headers with an empty body")
    void largeBody() throws Exception {
        String k = key();
        HttpResponse<String> first = send(server.request("payments/large?size=5000").header("Idempotency-Key", k).GET());
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).hasSize(5000);
        HttpResponse<String> retry = send(server.request("payments/large?size=5000").header("Idempotency-Key", k).GET());
        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.body()).isEmpty();
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(retry.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l).endsWith("/payments/large-result"));
        assertThat(retry.headers().firstValue("Content-Type")).isEmpty();
        assertThat(Counters.executions).hasValue(1);

        String small = key();
        send(server.request("payments/large?size=1024").header("Idempotency-Key", small).GET());
        assertThat(send(server.request("payments/large?size=1024").header("Idempotency-Key", small).GET()).body()).hasSize(1024);
    }

    @Test
    @DisplayName("a header too large for the stored form is the over-cap case: sent, stored without the body, never a key left claimed")
    void headerTooLargeToStore() throws Exception {
        String k = key();
        HttpResponse<String> first = send(server.request("payments/huge-header?size=70000").header("Idempotency-Key", k).GET());
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("ok");
        assertThat(first.headers().firstValue("Link")).hasValueSatisfying(l -> assertThat(l).hasSize(70_000 + 22));
        HttpResponse<String> retry = send(server.request("payments/huge-header?size=70000").header("Idempotency-Key", k).GET());
        assertThat(retry.statusCode()).as("replayed at once, not 409 on a key left claimed").isEqualTo(200);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEmpty();
        assertThat(retry.headers().firstValue("Link")).isEmpty();
        assertThat(Counters.executions).hasValue(1);
    }

    // ----------------------------------------------------------------------- unannotated resources, misc

    @Test
    @DisplayName("an unannotated resource is untouched: its body is not buffered and no key is asked for")
    void unannotatedUntouched() throws Exception {
        String plain = send(post("plain/stream", null, "hello")).body();
        String guarded = send(post("payments/stream", key(), "hello")).body();
        assertThat(guarded).isEqualTo("java.io.ByteArrayInputStream hello");
        assertThat(plain).endsWith(" hello").doesNotStartWith("java.io.ByteArrayInputStream");
    }

    @Test
    @DisplayName("@Idempotent on the class covers every method, PUT and DELETE alike")
    void classLevelAndOtherMethods() throws Exception {
        String k = key();
        HttpRequest.Builder put = server.request("items/7").header("Idempotency-Key", k).PUT(HttpRequest.BodyPublishers.ofString("v"));
        assertThat(send(put).body()).isEqualTo("put 7 #1");
        assertThat(send(put).body()).isEqualTo("put 7 #1");
        String d = key();
        HttpRequest.Builder delete = server.request("items/7").header("Idempotency-Key", d).DELETE();
        assertThat(send(delete).body()).isEqualTo("deleted 7 #2");
        assertThat(send(delete).body()).isEqualTo("deleted 7 #2");
        assertProblem(send(server.request("items/7").DELETE()), 400, "key-missing");
    }

    @Test
    @DisplayName("The header name is configurable per method")
    void customHeader() throws Exception {
        String k = key();
        HttpRequest.Builder b = server.request("payments/custom-header").header("X-Request-Id", k).POST(HttpRequest.BodyPublishers.noBody());
        assertThat(send(b).body()).isEqualTo("run 1");
        assertThat(send(b).body()).isEqualTo("run 1");
        HttpResponse<String> missing = send(server.request("payments/custom-header").header("Idempotency-Key", k).POST(HttpRequest.BodyPublishers.noBody()));
        assertProblem(missing, 400, "key-missing");
        assertThat(missing.body()).contains("X-Request-Id");
    }
}
