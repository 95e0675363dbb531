package dev.idempotency.cluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.ClusterRecordCache;
import dev.idempotency.cache.ClusterTuning;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.cache.ManagedRecordCache;
import dev.idempotency.cache.RemoteCaches;
import dev.idempotency.config.RemoteCacheSettings;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.HdrHistogram.Histogram;
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
 * /load?kind=replay|new&amp;seconds=S&amp;threads=T[&amp;keys=P&amp;count=K]
 *                 a closed loop of T threads for S seconds (ScalingRun): replays of the K finished keys P-0..P-(K-1),
 *                 or first requests of new keys; answers "ops=N meanNanos=M p50Nanos=A p99Nanos=B"
 * </pre>
 *
 * Arguments: node name, JGroups port, initial hosts, lease in milliseconds, and optionally the cluster's secret
 * ({@code idempotency.cache.secret}; without it the stack is the plain one, allowed on loopback).
 *
 * <p>The system property {@code idempotency.test.cache} chooses the cache: {@code replicated} (the default),
 * {@code distributed:<owners>} (both over JGroups, as above), {@code local} (this JVM's alone), or {@code remote:<host:port;host:port>} (an Infinispan
 * Server cluster over Hot Rod; the JGroups arguments are then unused).
 */
public final class ClusterNode {

    private final String name;
    private final JtaEnvironment env;
    private final EmbeddedCacheManager manager;
    private final ManagedRecordCache cache;
    /** The cache's entries rejected so far (MAC or scope). */
    private java.util.function.LongSupplier rejected = () -> 0;
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
        // A pool of 16 a node: four nodes' pools together stay well inside PostgreSQL's 100 connections, whatever else
        // holds some, and a node's racing calls (24 at most in these tests) wait their turn for a connection.
        TestDatabase db = TestDatabase.POSTGRES;
        env = new JtaEnvironment(db.url, db.user, db.password, Map.of("hibernate.generate_statistics", "true"),
                Integer.getInteger("idempotency.test.pool", 16), false);
        CacheKeys keys = secret == null ? CacheKeys.unprotected("idempotency-cluster-test")
                : CacheKeys.of(secret.getBytes(StandardCharsets.UTF_8));
        String kind = System.getProperty("idempotency.test.cache", "replicated");
        LocalCompletionSignals signals = new LocalCompletionSignals();
        if (kind.startsWith("remote:")) {
            manager = null;
            cache = RemoteCaches.start(remote(kind.substring("remote:".length())), null, 2, 10_000, keys, false,
                    Clock.systemUTC(), signals);
        } else {
            int owners = kind.startsWith("distributed:") ? Integer.parseInt(kind.substring("distributed:".length())) : 0;
            manager = CacheManagers.start(!kind.equals("local"), "idempotency-cluster-test", name, null, "127.0.0.1", port,
                    initialHosts, 10_000, keys, false, owners);
            manager.addListener(new Views());
            views.add(String.valueOf(manager.getMembers()));
            // As the library builds it: a clustered cache bounded and bypassed while members do not answer.
            InfinispanRecordCache records = new InfinispanRecordCache(CacheManagers.defineCache(manager, 10_000, owners),
                    Clock.systemUTC(), signals, keys);
            cache = records.shared() ? ClusterRecordCache.start(records, ClusterTuning.DEFAULT) : records;
            rejected = records::rejectedEntries;
        }
        engine = new IdempotencyEngine(env.store, Clock.systemUTC(), name, env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), cache);
        reject = new Policy(Duration.ofHours(1), Duration.ofMillis(leaseMillis), false, Duration.ZERO);
        wait = new Policy(Duration.ofHours(1), Duration.ofMillis(leaseMillis), true, Duration.ofSeconds(60));
    }

    /**
     * The library's defaults for a remote cache on these servers, with a short retry interval for the tests, and a
     * wait poll of 45 s: longer than the 30 s a test gives a waiter to be woken, so that only the servers' event can
     * wake it in time.
     */
    static RemoteCacheSettings remote(String servers) {
        return new RemoteCacheSettings(RemoteCacheSettings.servers("servers", servers), "idempotency-records", true, "", "",
                "default", "SCRAM-SHA-512", false, "", "", "", "", 0, Duration.ofSeconds(2), Duration.ofSeconds(1),
                Duration.ofSeconds(45));
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
                case "/run" -> written(run(q.get("key"), Boolean.parseBoolean(q.get("hold")), Boolean.parseBoolean(q.get("wait")),
                        q.containsKey("lease") ? Duration.ofMillis(Long.parseLong(q.get("lease"))) : null));
                case "/optimistic" -> written(optimistic(q.get("key"), Long.parseLong(q.getOrDefault("workMillis", "0"))));
                case "/works" -> String.valueOf(works.get());
                case "/release" -> {
                    holds.computeIfAbsent(q.get("key"), k -> new CountDownLatch(1)).countDown();
                    yield "released";
                }
                case "/statements" -> String.valueOf(env.statements());
                case "/members" -> String.valueOf(manager == null ? cache.members() : manager.getMembers() == null ? 1 : manager.getMembers().size());
                case "/reachable" -> String.valueOf(cache.reachable());
                case "/relistened" -> String.valueOf(cache.listenerRenewals());
                case "/views" -> String.join("\n", views);
                case "/peek" -> cache.get(new ScopedKey("cluster", "anonymous", q.get("key")))
                        .map(r -> "present " + new String(r.response(), StandardCharsets.UTF_8))
                        .orElse(cache.holds(new ScopedKey("cluster", "anonymous", q.get("key")))
                                ? "no-record" : "absent");
                case "/rejected" -> String.valueOf(rejected.getAsLong());
                case "/load" -> load(q.get("kind"), Integer.parseInt(q.get("seconds")), Integer.parseInt(q.get("threads")),
                        q.get("keys"), Integer.parseInt(q.getOrDefault("count", "0")));
                case "/flush" -> {
                    cache.clear();
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

    /**
     * The answer, once the cache writes the call queued are done (a clustered cache's leave the request's thread): what a
     * test reads next, on any node, is then the cache's, not a race with the writer.
     */
    private String written(String answer) {
        if (cache instanceof ClusterRecordCache guarded && !guarded.awaitWrites(Duration.ofSeconds(30))) {
            throw new IllegalStateException("the cache's writes were not done within 30 s");
        }
        return answer;
    }

    /** How many times this node's optimistic work began (committed or not). */
    private final java.util.concurrent.atomic.AtomicInteger works = new java.util.concurrent.atomic.AtomicInteger();

    /** An optimistic call that waits for a duplicate's answer: its work writes the effect and takes {@code workMillis}. */
    private String optimistic(String key, long workMillis) throws Exception {
        dev.idempotency.core.AtomicOutcome<String> outcome = engine.flow(dev.idempotency.ClaimMode.OPTIMISTIC)
                .run(new ScopedKey("cluster", "anonymous", key), "fp", null, wait, dev.idempotency.testing.TextCall.of(() -> {
                    works.incrementAndGet();
                    try (Connection c = env.dataSource.getConnection();
                         PreparedStatement ps = c.prepareStatement("insert into cluster_effect (idem_key, node) values (?, ?)")) {
                        ps.setString(1, key);
                        ps.setString(2, name);
                        ps.executeUpdate();
                    }
                    Thread.sleep(workMillis); // the work's length, during which duplicates arrive
                    return "done by " + name;
                }));
        return outcome instanceof dev.idempotency.core.AtomicOutcome.Ran ? "executed" : "replayed";
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

    /**
     * A closed loop for the scaling measurements: every thread runs requests back to back until the time is up. Every
     * request's time goes into an HdrHistogram (3 significant digits).
     */
    private String load(String kind, int seconds, int threads, String keys, int count) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        java.util.List<java.util.concurrent.Future<Histogram>> results = new java.util.ArrayList<>();
        java.util.concurrent.ExecutorService pool = Executors.newFixedThreadPool(threads);
        String prefix = name + "-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        try {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    Histogram h = new Histogram(3);
                    java.util.Random random = new java.util.Random(thread);
                    for (long n = 0; System.nanoTime() < end; n++) {
                        String key = kind.equals("replay") ? keys + "-" + random.nextInt(count) : prefix + "-" + thread + "-" + n;
                        long started = System.nanoTime();
                        String answer = run(key, false, false, null);
                        long took = System.nanoTime() - started;
                        if (!answer.equals(kind.equals("replay") ? "replayed" : "executed")) {
                            throw new IllegalStateException(key + ": " + answer);
                        }
                        h.recordValue(took);
                    }
                    return h;
                }));
            }
            Histogram all = new Histogram(3);
            for (java.util.concurrent.Future<Histogram> f : results) {
                all.add(f.get());
            }
            long ops = all.getTotalCount();
            return ops == 0 ? "ops=0" : "ops=" + ops + " meanNanos=" + Math.round(all.getMean())
                    + " p50Nanos=" + all.getValueAtPercentile(50) + " p99Nanos=" + all.getValueAtPercentile(99);
        } finally {
            pool.shutdownNow();
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
