package dev.idempotency.http;

import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Always answers" over HTTP: 40 first requests at once, each holding its business connection for 200 ms inside its
 * transaction, on a pool of 4 connections (RESTEasy on Undertow with 80 worker threads, Weld, Narayana, Agroal):
 * every one answered 201 and run once, and no transaction was handed a second physical connection.
 */
class HttpPoolStarvationTest {

    static final int POOL = 4;
    static final int REQUESTS = 40;

    HttpTestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest(name = "{0}, {1} claim")
    @CsvSource({"H2, atomic", "H2, leased", "H2, optimistic", "POSTGRES, atomic", "POSTGRES, leased", "POSTGRES, optimistic",
            "MARIADB, atomic", "MARIADB, leased", "MARIADB, optimistic"})
    void aBurstOfFirstRequestsLargerThanThePoolIsServedInFull(TestDatabase database, String claim) throws Exception {
        database.assumeAvailable();
        Counters.reset();
        server = HttpTestServer.on(database, POOL, Map.of("idempotency.claim", claim), SlowLedgerResource.class);
        HttpResources.census.reset();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        long started = System.nanoTime();
        java.util.concurrent.atomic.AtomicLong slowest = new java.util.concurrent.atomic.AtomicLong();
        for (int i = 0; i < REQUESTS; i++) {
            HttpRequest request = server.request("slow-ledger?millis=200").header("Idempotency-Key", UUID.randomUUID().toString())
                    .timeout(java.time.Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.noBody()).build();
            answers.add(server.client.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                    .whenComplete((r, e) -> slowest.accumulateAndGet(System.nanoTime() - started, Math::max)));
        }
        for (CompletableFuture<HttpResponse<String>> answer : answers) {
            HttpResponse<String> r = answer.get(180, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as("%s after %.1f s", r.body(), slowest.get() / 1e9).isEqualTo(201);
        }
        assertThat(Counters.executions).hasValue(REQUESTS);
        assertThat(database.count("select count(*) from test_payment")).isEqualTo(REQUESTS);
        assertThat(database.count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(REQUESTS);
        assertThat(HttpResources.census.mostPhysicalInOneTransaction()).as("physical connections one transaction held").isEqualTo(1);
        System.out.printf("POOL-STARVATION HTTP %s claim=%s: %d requests on a pool of %d answered 201; most handles one"
                        + " transaction asked for: %d; transactions: %d; handles outside transactions: %d; the slowest after %.1f s%n",
                database, claim, REQUESTS, POOL, HttpResources.census.mostHandlesInOneTransaction(), HttpResources.census.transactions(),
                HttpResources.census.handlesOutsideTransactions(), slowest.get() / 1e9);
    }
}
