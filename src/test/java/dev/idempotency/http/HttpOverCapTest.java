package dev.idempotency.http;

import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Answers larger than the response cap ({@code maxResponseSize}, 1 KiB here): stored without their body when they
 * outgrow the cap, before any of them is sent. In the atomic and optimistic modes that is the commit, so an answer
 * whose transaction was marked for rollback (a bean the resource called failed, and the resource answered anyway) is
 * never sent as a success: the client gets {@code 500} rolled-back, nothing is kept, and its retry runs.
 */
class HttpOverCapTest {

    HttpTestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    void start(String claim) throws Exception {
        Counters.reset();
        server = HttpTestServer.onH2(Map.of("idempotency.claim", claim, "Idempotent/maxResponseSize", "1024"), LedgerResource.class);
    }

    HttpResponse<String> post(String query, String key) throws Exception {
        return server.send(server.request("ledger?" + query).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    static long rows() {
        return TestDatabase.H2.count("select count(*) from test_payment");
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void anAnswerOverTheCapIsSentInFullAndItsRetryGetsItsStatusAndHeaders(String claim) throws Exception {
        start(claim);
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post("pad=8192", key);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body().getBytes(StandardCharsets.UTF_8).length).as("the whole body").isGreaterThan(8192);
        HttpResponse<String> retry = post("pad=8192", key);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).as("kept without its body").isEmpty();
        assertThat(Counters.executions).hasValue(1);
    }

    /** The finding: before, the 201 and its body went out before the commit that then rolled back. */
    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic"})
    void anAnswerOverTheCapWhoseTransactionRollsBackIsNeverSentAsASuccess(String claim) throws Exception {
        start(claim);
        long before = rows();
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post("pad=8192&rollbackOnly=true", key);
        assertThat(first.statusCode()).as("not the 201 of work that was undone").isEqualTo(500);
        assertThat(first.body()).contains("rolled-back").doesNotContain("xxxxxxxx");
        assertThat(rows()).as("its write rolled back").isEqualTo(before);
        HttpResponse<String> retry = post("pad=8192", key);
        assertThat(retry.statusCode()).as("nothing was kept: the retry runs").isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Counters.executions).hasValue(2);
        assertThat(rows()).isEqualTo(before + 1);
    }
}
