package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Keyed requests without a principal, per the method's anonymous policy (allow, reject, a client header). */
class HttpAnonymousTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        server = HttpTestServer.onH2(Map.of(AnonymousResource.class.getName() + "/configured/Idempotent/anonymous", "reject"),
                AnonymousResource.class);
    }

    HttpResponse<String> post(String path, String key, String... headers) throws Exception {
        HttpRequest.Builder b = server.request("anonymous/" + path).POST(HttpRequest.BodyPublishers.noBody());
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        if (headers.length > 0) {
            b.headers(headers);
        }
        return server.send(b.build());
    }

    static void assertProblem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"type\":\"https://idempotency.dev/problems/" + type + "\"").contains("\"status\":" + status);
    }

    @Test
    @DisplayName("allow (the default): every anonymous caller shares one scope, so a second one with the same key gets the first one's response")
    void allowSharesOneAnonymousScope() throws Exception {
        String k = UUID.randomUUID().toString();
        HttpResponse<String> first = post("allow", k);
        HttpResponse<String> stranger = post("allow", k);
        assertThat(first.body()).isEqualTo("run 1 by anonymous");
        assertThat(stranger.body()).isEqualTo(first.body());
        assertThat(stranger.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("reject: a keyed request without a principal is 401 problem+json and nothing runs; an authenticated one runs once")
    void rejectAnswers401() throws Exception {
        String k = UUID.randomUUID().toString();
        HttpResponse<String> anonymous = post("reject", k);
        assertProblem(anonymous, 401, "unauthenticated");
        assertThat(anonymous.body()).contains("only from an authenticated caller");
        assertThat(Counters.executions).hasValue(0);
        assertProblem(post("reject", null), 400, "key-missing");

        HttpResponse<String> alice = post("reject", k, "Authorization", BasicAuthFilter.basic("alice"));
        assertThat(alice.body()).isEqualTo("run 1 by alice");
        HttpResponse<String> retry = post("reject", k, "Authorization", BasicAuthFilter.basic("alice"));
        assertThat(retry.body()).isEqualTo(alice.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertProblem(post("reject", k), 401, "unauthenticated");
        assertThat(Counters.executions).hasValue(1);
    }

    @Test
    @DisplayName("header: each anonymous client id is a scope of its own; no header is 401, a malformed one 400; a principal wins over the header")
    void aClientHeaderScopesAnonymousKeys() throws Exception {
        String k = UUID.randomUUID().toString();
        HttpResponse<String> a = post("client", k, "X-Client-Id", "client-a");
        HttpResponse<String> b = post("client", k, "X-Client-Id", "client-b");
        assertThat(a.body()).isEqualTo("run 1 by anonymous");
        assertThat(b.body()).as("another client's key is another operation").isEqualTo("run 2 by anonymous");
        HttpResponse<String> retryA = post("client", k, "X-Client-Id", "client-a");
        assertThat(retryA.body()).isEqualTo(a.body());
        assertThat(retryA.headers().firstValue("Idempotent-Replayed")).hasValue("true");

        HttpResponse<String> none = post("client", k);
        assertProblem(none, 401, "unauthenticated");
        assertThat(none.body()).contains("X-Client-Id");
        assertProblem(post("client", k, "X-Client-Id", "x".repeat(191)), 400, "client-id-invalid");
        assertProblem(post("client", k, "X-Client-Id", "a", "X-Client-Id", "b"), 400, "client-id-invalid");
        assertThat(Counters.executions).hasValue(2);

        HttpResponse<String> alice = post("client", k, "Authorization", BasicAuthFilter.basic("alice"), "X-Client-Id", "client-a");
        assertThat(alice.body()).as("alice's scope is her own, whatever client id she sends").isEqualTo("run 3 by alice");
    }

    /**
     * A request that sent credentials the server did not accept (a wrong password where no security constraint stops
     * it) is not an anonymous caller's: run in the shared anonymous scope, it would charge as anybody and replay to
     * anybody. It is answered 401 under every policy, with a challenge in the scheme it tried.
     */
    @Test
    @DisplayName("credentials not accepted: 401 unauthenticated with WWW-Authenticate in their scheme, under every policy; nothing runs")
    void credentialsNotAcceptedAreNotAnonymous() throws Exception {
        String k = UUID.randomUUID().toString();
        for (String path : new String[] {"allow", "reject", "client"}) {
            HttpResponse<String> refused = post(path, k, "Authorization", "Bearer not-a-token", "X-Client-Id", "client-a");
            assertProblem(refused, 401, "unauthenticated");
            assertThat(refused.body()).contains("credentials were not accepted");
            assertThat(refused.headers().firstValue("WWW-Authenticate")).as(path).hasValue("Bearer");
        }
        assertThat(Counters.executions).hasValue(0);
        assertThat(post("allow", k).body()).as("the same key from an anonymous caller runs").isEqualTo("run 1 by anonymous");
    }

    @Test
    @DisplayName("every 401 of the library carries a WWW-Authenticate challenge (idempotency.www-authenticate, Bearer by default)")
    void unauthenticatedAnswersCarryAChallenge() throws Exception {
        HttpResponse<String> rejected = post("reject", UUID.randomUUID().toString());
        assertProblem(rejected, 401, "unauthenticated");
        assertThat(rejected.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        HttpResponse<String> noClient = post("client", UUID.randomUUID().toString());
        assertThat(noClient.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    }

    /** A user the server authenticated under the name {@code anonymous} has a scope of its own, not the anonymous one. */
    @Test
    @DisplayName("an authenticated user named anonymous does not share the unauthenticated callers' scope")
    void aUserNamedAnonymousIsNotAnonymous() throws Exception {
        String k = UUID.randomUUID().toString();
        assertThat(post("allow", k).body()).isEqualTo("run 1 by anonymous");
        HttpResponse<String> named = post("allow", k, "Authorization", BasicAuthFilter.basic("anonymous"));
        assertThat(named.body()).as("its own scope: it runs").isEqualTo("run 2 by anonymous");
        assertThat(named.headers().firstValue("Idempotent-Replayed")).isEmpty();
        HttpResponse<String> again = post("allow", k);
        assertThat(again.body()).isEqualTo("run 1 by anonymous");
        assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    }

    @Test
    @DisplayName("a per-method override: <fqcn>/<method>/Idempotent/anonymous=reject overrides the annotation's allow")
    void configurationOverridesTheAnnotation() throws Exception {
        assertProblem(post("configured", UUID.randomUUID().toString()), 401, "unauthenticated");
        assertThat(Counters.executions).hasValue(0);
    }
}
