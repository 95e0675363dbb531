package dev.idempotency.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code Idempotency-Key} header in the server, through the example's {@code POST /api/payments}. */
class HttpIT extends ServerIT {

    @Deployment(testable = false)
    static WebArchive deployment() {
        return exampleWithTestBeans();
    }

    static final String PAYMENT = "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"order-1\"}";

    static String key() {
        return UUID.randomUUID().toString();
    }

    @Test
    @DisplayName("H2: no Idempotency-Key: 400 problem+json, nothing charged")
    void missingKey() throws Exception {
        long charges = stat("charges");
        HttpResponse<String> r = send(postJson("api/payments", null, PAYMENT));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("https://idempotency.dev/problems/key-missing");
        assertThat(stat("charges")).isEqualTo(charges);
    }

    static final String ATOMIC = "api/payments";
    /** The same create with {@code @Idempotent(claim = ClaimMode.OPTIMISTIC)}. */
    static final String OPTIMISTIC = "api/payments/optimistic";

    @Test
    @DisplayName("the retry gets the same bytes and Location, marked replayed; charged once")
    void replay() throws Exception {
        replay(ATOMIC);
    }

    @Test
    @DisplayName("Optimistic claim: the retry gets the same bytes and Location, marked replayed; charged once")
    void optimisticReplay() throws Exception {
        replay(OPTIMISTIC);
    }

    void replay(String path) throws Exception {
        long payments = stat("payments");
        String k = key();
        HttpResponse<String> first = send(postJson(path, k, PAYMENT));
        HttpResponse<String> retry = send(postJson(path, k, PAYMENT));
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location")).isPresent();
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(stat("payments")).isEqualTo(payments + 1);
        String location = first.headers().firstValue("Location").orElseThrow();
        String id = location.substring(location.lastIndexOf('/') + 1);
        assertThat(send(request("api/payments/" + id)).body()).contains("\"id\":\"" + id + "\"");
    }

    @Test
    @DisplayName("the first answer and its replay are the same bytes; one payment row")
    void identicalBytes() throws Exception {
        identicalBytes(ATOMIC);
    }

    @Test
    @DisplayName("Optimistic claim: the first answer and its replay are the same bytes; one payment row")
    void optimisticIdenticalBytes() throws Exception {
        identicalBytes(OPTIMISTIC);
    }

    void identicalBytes(String path) throws Exception {
        long payments = stat("payments");
        String k = key();
        HttpResponse<byte[]> first = CLIENT.send(postJson(path, k, PAYMENT).build(), HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> retry = CLIENT.send(postJson(path, k, PAYMENT).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body()).isNotEmpty();
        assertThat(stat("payments")).isEqualTo(payments + 1);
    }

    @Test
    @DisplayName("a 500 after the charge wrote its row leaves neither the row nor the key")
    void serverErrorLeavesNothing() throws Exception {
        serverErrorLeavesNothing(ATOMIC);
    }

    @Test
    @DisplayName("Optimistic claim: a 500 after the charge wrote its row leaves neither the row nor the key")
    void optimisticServerErrorLeavesNothing() throws Exception {
        serverErrorLeavesNothing(OPTIMISTIC);
    }

    void serverErrorLeavesNothing(String path) throws Exception {
        long payments = stat("payments");
        long charges = stat("charges");
        String k = key();
        String failing = "{\"amount\":500,\"currency\":\"EUR\",\"fail\":true}";
        assertThat(send(postJson(path, k, failing)).statusCode()).isEqualTo(500);
        assertThat(stat("payments")).as("the payment row rolled back").isEqualTo(payments);
        HttpResponse<String> again = send(postJson(path, k, failing));
        assertThat(again.statusCode()).isEqualTo(500);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).as("the key was free: it ran again").isEmpty();
        assertThat(stat("charges")).isEqualTo(charges + 2);
        assertThat(stat("payments")).isEqualTo(payments);
        // The transaction the request began ended with the request: no request thread carries it into the next request
        // it serves (a first request that joined it would answer 201 and never commit).
        for (int i = 0; i < 20; i++) {
            assertThat(send(postJson(path, key(), PAYMENT)).statusCode()).isEqualTo(201);
        }
        assertThat(stat("payments")).as("each of the 20 committed").isEqualTo(payments + 20);
    }

    @Test
    @DisplayName("The example's hand-written twin (no library): the retry is replayed, another body with the key is 422")
    void byHandTwin() throws Exception {
        long payments = stat("payments");
        String k = key();
        HttpResponse<String> first = send(postJson("api/payments/by-hand", k, PAYMENT));
        HttpResponse<String> retry = send(postJson("api/payments/by-hand", k, PAYMENT));
        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(send(postJson("api/payments/by-hand", k, PAYMENT.replace("1000", "2000"))).statusCode()).isEqualTo(422);
        assertThat(stat("payments")).isEqualTo(payments + 1);
    }

    @Test
    @DisplayName("The functional API: a retried batch charges only its new items, and says which were replayed")
    void batchChargesOnlyTheNewItems() throws Exception {
        long charges = stat("charges");
        String a = key();
        String b = key();
        String c = key();
        String first = "{\"items\":[" + item(a, 100) + "," + item(b, 200) + "]}";
        HttpResponse<String> r1 = send(postJson("api/payments/batch", null, first));
        assertThat(r1.statusCode()).as(r1.body()).isEqualTo(200);
        assertThat(r1.body()).contains("\"key\":\"" + a + "\",\"outcome\":\"charged\"")
                .contains("\"key\":\"" + b + "\",\"outcome\":\"charged\"");
        assertThat(stat("charges")).isEqualTo(charges + 2);
        // The batch again, with one new item: only the new one is charged.
        String again = "{\"items\":[" + item(a, 100) + "," + item(b, 200) + "," + item(c, 300) + "]}";
        HttpResponse<String> r2 = send(postJson("api/payments/batch", null, again));
        assertThat(r2.statusCode()).as(r2.body()).isEqualTo(200);
        assertThat(r2.body()).contains("\"key\":\"" + a + "\",\"outcome\":\"replayed\"")
                .contains("\"key\":\"" + b + "\",\"outcome\":\"replayed\"")
                .contains("\"key\":\"" + c + "\",\"outcome\":\"charged\"");
        assertThat(stat("charges")).as("only the new item charged").isEqualTo(charges + 3);
        // A known key with another amount is refused, and charges nothing.
        HttpResponse<String> r3 = send(postJson("api/payments/batch", null, "{\"items\":[" + item(a, 999) + "]}"));
        assertThat(r3.body()).contains("\"outcome\":\"refused\"");
        assertThat(stat("charges")).isEqualTo(charges + 3);
    }

    static String item(String key, long amount) {
        return "{\"key\":\"" + key + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
    }

    @Test
    @DisplayName("the same key with another body: 422, nothing charged")
    void reused() throws Exception {
        String k = key();
        send(postJson("api/payments", k, PAYMENT));
        long charges = stat("charges");
        HttpResponse<String> r = send(postJson("api/payments", k, PAYMENT.replace("1000", "2000")));
        assertThat(r.statusCode()).isEqualTo(422);
        assertThat(r.body()).contains("https://idempotency.dev/problems/key-reused");
        assertThat(stat("charges")).isEqualTo(charges);
    }

    /**
     * "Always answers": three times as many slow first requests as the server's pool has connections (each profile
     * gives its default data source a pool of {@code it.pool-size}). With the atomic claim each one holds its
     * connection from the claim to the commit, so they are served in waves: every one answered 201, each charged once.
     */
    @Test
    @DisplayName("a burst of 3x the pool's connections of slow first requests: every one 201, one payment each")
    void burstLargerThanThePool() throws Exception {
        String poolSize = System.getProperty("it.pool-size");
        assertThat(poolSize).as("the profile names its data source's pool size (it.pool-size)").isNotBlank();
        int requests = 3 * Integer.parseInt(poolSize);
        long payments = stat("payments");
        long charges = stat("charges");
        String slow = "{\"amount\":300,\"currency\":\"EUR\",\"delayMillis\":1000}";
        long started = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            futures.add(CLIENT.sendAsync(postJson("api/payments", key(), slow).timeout(java.time.Duration.ofSeconds(120)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        long slowest = 0;
        for (CompletableFuture<HttpResponse<String>> f : futures) {
            HttpResponse<String> r = f.get(180, TimeUnit.SECONDS);
            slowest = Math.max(slowest, System.nanoTime() - started);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
            assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
        }
        assertThat(stat("payments")).as("one payment each").isEqualTo(payments + requests);
        assertThat(stat("charges")).as("each charged once").isEqualTo(charges + requests);
        System.out.printf("BURST %s: %d slow first requests on a pool of %s: all 201, the slowest after %.1f s%n",
                System.getProperty("server.name"), requests, poolSize, slowest / 1e9);
    }

    @Test
    @DisplayName("32 concurrent requests with one key: one payment in the database; the others 409 or the replay")
    void concurrent() throws Exception {
        concurrent(ATOMIC);
    }

    @Test
    @DisplayName("Optimistic claim: 32 concurrent requests with one key: one payment; the others 409 or the replay")
    void optimisticConcurrent() throws Exception {
        concurrent(OPTIMISTIC);
    }

    void concurrent(String path) throws Exception {
        long payments = stat("payments");
        String k = key();
        String slow = "{\"amount\":700,\"currency\":\"EUR\",\"delayMillis\":3000}";
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            futures.add(CLIENT.sendAsync(postJson(path, k, slow).build(), HttpResponse.BodyHandlers.ofString()));
        }
        int created = 0;
        int conflicts = 0;
        int replays = 0;
        for (CompletableFuture<HttpResponse<String>> f : futures) {
            HttpResponse<String> r = f.get(120, TimeUnit.SECONDS);
            if (r.statusCode() == 409) {
                conflicts++;
                assertThat(r.headers().firstValueAsLong("Retry-After")).isPresent();
                assertThat(r.body()).contains("https://idempotency.dev/problems/request-in-progress");
            } else {
                assertThat(r.statusCode()).isEqualTo(201);
                if (r.headers().firstValue("Idempotent-Replayed").isPresent()) {
                    replays++;
                } else {
                    created++;
                }
            }
        }
        assertThat(created).isEqualTo(1);
        assertThat(conflicts + replays).isEqualTo(31);
        assertThat(conflicts).as("most duplicates arrive while the first is charging").isPositive();
        assertThat(stat("payments")).isEqualTo(payments + 1);
    }

    @Test
    @DisplayName("a failed charge (500) releases the key: the retry charges again; a 4xx is kept")
    void outcomes() throws Exception {
        long charges = stat("charges");
        String k = key();
        String failing = "{\"amount\":500,\"currency\":\"EUR\",\"fail\":true}";
        assertThat(send(postJson("api/payments", k, failing)).statusCode()).isEqualTo(500);
        assertThat(send(postJson("api/payments", k, failing)).statusCode()).isEqualTo(500);
        assertThat(stat("charges")).isEqualTo(charges + 2);

        String bad = key();
        HttpResponse<String> invalid = send(postJson("api/payments", bad, "{\"amount\":-1,\"currency\":\"EUR\"}"));
        assertThat(invalid.statusCode()).isEqualTo(400);
        HttpResponse<String> again = send(postJson("api/payments", bad, "{\"amount\":-1,\"currency\":\"EUR\"}"));
        assertThat(again.statusCode()).isEqualTo(400);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(again.body()).isEqualTo(invalid.body());
    }

    /**
     * A wrong password on a resource no security constraint protects: some servers (Payara Micro, Open Liberty) pass the
     * request on without a caller. With a key it must not run as an anonymous caller, in the scope they all share.
     */
    @Test
    @DisplayName("a keyed request with a wrong password is 401 and charges nothing, on every server")
    void aWrongPasswordIsNotAnonymous() throws Exception {
        long payments = stat("payments");
        String wrong = "Basic " + java.util.Base64.getEncoder().encodeToString("alice:wrong".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        HttpResponse<String> refused = send(postJson("api/payments", key(), PAYMENT).header("Authorization", wrong));
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.headers().firstValue("WWW-Authenticate")).isPresent();
        assertThat(stat("payments")).as("nothing charged").isEqualTo(payments);
    }

    @Test
    @DisplayName("the example's cache flush is the operator's alone: 401 without credentials, 403 for a user, 204 for ops")
    void theCacheFlushIsTheOperatorsAlone() throws Exception {
        assertThat(send(request("api/ops/cache/flush").POST(java.net.http.HttpRequest.BodyPublishers.noBody())).statusCode()).isEqualTo(401);
        assertThat(send(request("api/ops/cache/flush").POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                .header("Authorization", basic("alice"))).statusCode()).isEqualTo(403);
        assertThat(send(request("api/ops/cache/flush").POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                .header("Authorization", basic("ops"))).statusCode()).isEqualTo(204);
    }

    @Test
    @DisplayName("alice and bob with the same key are two payments; each replays only their own")
    void principals() throws Exception {
        long payments = stat("payments");
        String k = key();
        HttpResponse<String> alice = send(postJson("api/payments", k, PAYMENT).header("Authorization", basic("alice")));
        HttpResponse<String> bob = send(postJson("api/payments", k, PAYMENT).header("Authorization", basic("bob")));
        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(alice.body()).isNotEqualTo(bob.body());
        assertThat(stat("payments")).isEqualTo(payments + 2);
        assertThat(send(postJson("api/payments", k, PAYMENT).header("Authorization", basic("alice"))).body()).isEqualTo(alice.body());
        assertThat(send(postJson("api/payments", k, PAYMENT).header("Authorization", basic("bob"))).body()).isEqualTo(bob.body());
        assertThat(send(postJson("api/payments", k, PAYMENT)).body()).isNotEqualTo(alice.body()).isNotEqualTo(bob.body());
        assertThat(stat("payments")).isEqualTo(payments + 3);
    }

    @Test
    @DisplayName("The example answers a malformed JSON body with 400 problem+json (not the server's 500 page); nothing charged")
    void malformedJson() throws Exception {
        long charges = stat("charges");
        long transfers = stat("transfers");
        for (String body : new String[] {"{\"amount\":1,", "{\"amount\":\"ten\",\"currency\":\"EUR\"}", "not json"}) {
            HttpResponse<String> r = send(postJson("api/payments", key(), body));
            assertThat(r.statusCode()).as(body).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
            assertThat(r.body()).contains("\"type\":\"https://idempotency.dev/example/problems/invalid-request\"")
                    .contains("\"status\":400").contains("not valid JSON");
            HttpResponse<String> t = send(postJson("api/transfers", null, body));
            assertThat(t.statusCode()).as(body).isEqualTo(400);
            assertThat(t.body()).contains("https://idempotency.dev/example/problems/invalid-request");
        }
        assertThat(stat("charges")).isEqualTo(charges);
        assertThat(stat("transfers")).isEqualTo(transfers);
    }

    static void assertProblem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).as(r.uri() + " " + r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).as(r.uri().toString())
                .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"type\":\"" + type + "\"").contains("\"status\":" + status);
    }

    @Test
    @DisplayName("Every refusal of the example is problem+json: an empty body, a media type or method it does not take, "
            + "no such path (in and outside the API); nothing charged")
    void everyRefusalIsProblemJson() throws Exception {
        long charges = stat("charges");
        for (String path : new String[] {ATOMIC, OPTIMISTIC, "api/payments/unprotected"}) {
            assertProblem(send(postJson(path, key(), "")), 400, "https://idempotency.dev/example/problems/invalid-request");
            assertProblem(send(request(path).header("Content-Type", "text/plain").header("Idempotency-Key", key())
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("1000 EUR"))), 415, "about:blank");
        }
        HttpResponse<String> delete = send(request(ATOMIC).DELETE());
        assertProblem(delete, 405, "about:blank");
        assertThat(delete.headers().firstValue("Allow")).as("the methods it takes").hasValueSatisfying(a -> assertThat(a).contains("POST"));
        assertProblem(send(request("api/no-such-resource")), 404, "https://idempotency.dev/example/problems/not-found");
        assertProblem(send(request("no-such-page")), 404, "https://idempotency.dev/example/problems/not-found");
        assertThat(stat("charges")).isEqualTo(charges);
    }

    @Test
    @DisplayName("A keyed body over 1 MiB is 413 problem request-too-large before it is read, nothing charged; "
            + "the unprotected endpoint reads the same body (the server itself takes it)")
    void bodyOverTheCap() throws Exception {
        long charges = stat("charges");
        String big = "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"" + "x".repeat(2 << 20) + "\"}";
        for (String path : new String[] {ATOMIC, OPTIMISTIC}) {
            HttpResponse<String> r = send(postJson(path, key(), big));
            assertProblem(r, 413, "https://idempotency.dev/problems/request-too-large");
            assertThat(r.body()).contains("at most 1048576 bytes");
        }
        HttpResponse<String> read = send(postJson("api/payments/unprotected", null, big));
        assertProblem(read, 400, "https://idempotency.dev/example/problems/invalid-request");
        assertThat(read.body()).contains("reference must be at most 200 characters");
        assertThat(stat("charges")).isEqualTo(charges);
    }
}
