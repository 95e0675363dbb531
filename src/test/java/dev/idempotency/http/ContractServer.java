package dev.idempotency.http;

import dev.idempotency.testing.JtaEnvironment;

import jakarta.ws.rs.core.Response;

import org.infinispan.manager.EmbeddedCacheManager;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A node of the first-answer contract's HTTP door ({@code dev.idempotency.contract}): the JAX-RS runtime of the HTTP
 * tests (RESTEasy, Undertow, Weld) with the library as a WAR has it, serving {@link ContractResource}, its JPA store
 * built by the library over the schedule's pool, on the schedule's clock, with the schedule's cache manager when it
 * shares one. One at a time (the runtime's CDI container has a fixed name).
 */
public final class ContractServer implements AutoCloseable {

    private final HttpTestServer server;
    private boolean closed;

    /**
     * @param config  the library's configuration (the JTA platform of the JPA store is added)
     * @param pool    the pool the store and the calls' work write through (left open)
     * @param clock   the engine's clock
     * @param manager the cache manager whose records cache the nodes share, or {@code null} for {@code idempotency.cache.mode}
     * @param calls   what each call answers, by its {@code X-Call} header (run on the request's thread)
     */
    public ContractServer(Map<String, String> config, DataSource pool, Clock clock, EmbeddedCacheManager manager,
                          Function<String, Response> calls) throws Exception {
        HttpResources.given = pool;
        HttpResources.clock = clock;
        HttpResources.cacheManager = manager;
        ContractResource.calls = calls;
        Map<String, String> c = new HashMap<>(config);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> c.put("idempotency.jpa." + k, v));
        try {
            server = new HttpTestServer(c, ContractResource.class);
        } catch (Exception e) {
            reset();
            throw e;
        }
    }

    /** {@code POST /contract/<path>} with the key, a text body (the request) and the call's id. */
    public HttpResponse<String> post(String path, String key, String body, String call) throws IOException, InterruptedException {
        return server.send(server.request("contract/" + path).header("Idempotency-Key", key).header("X-Call", call)
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    /** Empties the node's cache, as {@code IdempotencyManager.flushCache} does. */
    public void flush() throws IOException, InterruptedException {
        HttpResponse<String> r = server.send(server.request("contract/flush").POST(HttpRequest.BodyPublishers.noBody()).build());
        if (r.statusCode() != 204) {
            throw new IllegalStateException("flush: " + r.statusCode() + " " + r.body());
        }
    }

    /** The lease heartbeats the node's engine runs. */
    public int heartbeats() throws IOException, InterruptedException {
        return Integer.parseInt(server.send(server.request("contract/heartbeats").GET().build()).body());
    }

    @Override
    public void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } finally {
            reset();
        }
    }

    private static void reset() {
        HttpResources.given = null;
        HttpResources.clock = null;
        HttpResources.cacheManager = null;
        ContractResource.calls = null;
    }
}
