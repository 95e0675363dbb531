package dev.idempotency.cluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachemanagerlistener.annotation.ViewChanged;
import org.infinispan.notifications.cachemanagerlistener.event.ViewChangedEvent;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One node of the cluster tests, in a JVM of its own: the JPA store on the local PostgreSQL (Narayana JTA),
 * an Infinispan cache manager in a JGroups TCP cluster on loopback, and the engine; driven over HTTP:
 *
 * <pre>
 * /run?key=K[&amp;hold=true][&amp;wait=true][&amp;lease=ms]   claim; if new, insert a row into cluster_effect and
 *                      complete, in one transaction (held open until /release?key=K when hold=true)
 * /release?key=K  /statements  /members  /flush
 * /views          every view this node installed, one a line (members by name)
 * /peek?key=K     what this node's cache holds for K: "absent", or "present" and the response
 * /rejected       cache entries rejected (MAC or scope) so far
 * </pre>
 *
 * Arguments: node name, JGroups port, initial hosts, lease in milliseconds, and optionally the cluster's secret
 * ({@code idempotency.cache.secret}; without it the stack is the plain one, allowed on loopback).
 */
public final class ClusterNode {

    private final String name;
    private final JtaEnvironment env;
    private final EmbeddedCacheManager manager;
    private final InfinispanRecordCache cache;
    private final IdempotencyEngine engine;
    private final Policy reject;
    private final Policy wait;
    private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();
    private final java.util.List<String> views = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Listener
    public final class Views {
        @ViewChanged
        public void changed(ViewChangedEvent e) {
            views.add(String.valueOf(e.getNewMembers()));
        }
    }

    ClusterNode(String name, int port, String initialHosts, long leaseMillis, String secret) {
        this.name = name;
        env = new JtaEnvironment(TestDatabase.POSTGRES, Map.of("hibernate.generate_statistics", "true"));
        CacheKeys keys = secret == null ? CacheKeys.unprotected("idempotency-cluster-test")
                : CacheKeys.of(secret.getBytes(StandardCharsets.UTF_8));
        manager = CacheManagers.start(true, "idempotency-cluster-test", name, null, "127.0.0.1", port, initialHosts, 10_000,
                keys, false);
        manager.addListener(new Views());
        views.add(String.valueOf(manager.getMembers()));
        LocalCompletionSignals signals = new LocalCompletionSignals();
        cache = new InfinispanRecordCache(CacheManagers.defineCache(manager, 10_000), Clock.systemUTC(), signals, keys);
        engine = new IdempotencyEngine(env.store, Clock.systemUTC(), name, env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), cache);
        reject = new Policy(Duration.ofHours(1), Duration.ofMillis(leaseMillis), false, Duration.ZERO);
        wait = new Policy(Duration.ofHours(1), Duration.ofMillis(leaseMillis), true, Duration.ofSeconds(60));
    }

    public static void main(String[] args) throws Exception {
        ClusterNode node = new ClusterNode(args[0], Integer.parseInt(args[1]), args[2], Long.parseLong(args[3]),
                args.length > 4 ? args[4] : null);
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.setExecutor(Executors.newCachedThreadPool());
        http.createContext("/", node::handle);
        http.start();
        System.out.println("READY " + http.getAddress().getPort());
        System.out.flush();
    }

    private void handle(HttpExchange exchange) throws IOException {
        String answer;
        int status = 200;
        try {
            Map<String, String> q = query(exchange.getRequestURI());
            answer = switch (exchange.getRequestURI().getPath()) {
                case "/run" -> run(q.get("key"), Boolean.parseBoolean(q.get("hold")), Boolean.parseBoolean(q.get("wait")),
                        q.containsKey("lease") ? Duration.ofMillis(Long.parseLong(q.get("lease"))) : null);
                case "/release" -> {
                    holds.computeIfAbsent(q.get("key"), k -> new CountDownLatch(1)).countDown();
                    yield "released";
                }
                case "/statements" -> String.valueOf(env.statements());
                case "/members" -> String.valueOf(manager.getMembers() == null ? 1 : manager.getMembers().size());
                case "/views" -> String.join("\n", views);
                case "/peek" -> cache.get(new ScopedKey("cluster", "anonymous", q.get("key")))
                        .map(r -> "present " + new String(r.response(), StandardCharsets.UTF_8))
                        .orElse(cache.cache().containsKey(new ScopedKey("cluster", "anonymous", q.get("key")).cacheId())
                                ? "no-record" : "absent");
                case "/rejected" -> String.valueOf(cache.rejectedEntries());
                case "/flush" -> {
                    cache.cache().clear();
                    yield "flushed";
                }
                default -> "unknown";
            };
        } catch (Exception e) {
            status = 500;
            answer = e.toString();
        }
        byte[] body = answer.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private String run(String key, boolean hold, boolean waitForIt, Duration lease) throws Exception {
        ScopedKey scopedKey = new ScopedKey("cluster", "anonymous", key);
        Policy policy = waitForIt ? wait : reject;
        if (lease != null) {
            policy = new Policy(policy.ttl(), lease, policy.waitForResult(), policy.waitTimeout());
        }
        Decision d;
        try {
            d = engine.begin(scopedKey, "fp", null, policy);
        } catch (IdempotencyInProgressException e) {
            return "conflict";
        }
        if (d instanceof Decision.Replay) {
            return "replayed";
        }
        Ticket ticket = ((Decision.Proceed) d).ticket();
        env.tm.begin();
        try {
            try (Connection c = env.dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into cluster_effect (idem_key, node) values (?, ?)")) {
                ps.setString(1, key);
                ps.setString(2, name);
                ps.executeUpdate();
            }
            if (hold && !holds.computeIfAbsent(key, k -> new CountDownLatch(1)).await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            engine.complete(ticket, ("done by " + name).getBytes(StandardCharsets.UTF_8));
            env.tm.commit();
            return ticket.takeover() ? "took-over" : "executed";
        } catch (Exception e) {
            if (env.tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
                env.tm.rollback();
            }
            throw e;
        }
    }

    private static Map<String, String> query(URI uri) {
        Map<String, String> q = new HashMap<>();
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                q.put(pair.substring(0, eq), java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return q;
    }
}
