package dev.idempotency.it;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two clustered Payara Micro nodes of the example on PostgreSQL, started as the README says
 * ({@code example/node 1}, {@code example/node 2}: HTTP on 8080 and 8081, JGroups on 7800 and 7801), once per
 * test JVM: the first test that asks for it ({@link Extension}) starts them, JUnit's root store keeps them for
 * the other test classes and stops them when every test has run (SIGTERM, then SIGKILL after a minute).
 *
 * <p>The nodes reach PostgreSQL through a {@link dev.idempotency.testing.TcpProxy} in this JVM ({@code PGPORT} is its port), so that
 * a test can make the store unreachable; the tests themselves count rows directly ({@link #database()}).
 * A node can be killed (SIGKILL of its JVM: {@code example/node} {@code exec}s java) and started again; each
 * start's output goes to {@code target/cluster-logs/node-N-S.log}.
 *
 * <p>The cluster must run on the library's own JGroups stack (TCP on 127.0.0.1, from
 * {@code idempotency.cache.*}): a node whose log shows {@value #DEFAULT_STACK} (Infinispan built its default
 * UDP multicast stack instead), or whose JGroups channel reports a physical address not on 127.0.0.1, fails
 * the start.
 */
final class ExampleCluster implements ExtensionContext.Store.CloseableResource {

    /** Each node's PostgreSQL pool ({@code -Dchaos.pool-size}): small, so that ChaosIT's burst is larger than it. */
    static final int POOL_SIZE = Integer.getInteger("chaos.pool-size", 8);

    /** The library's start-up line when its cache is clustered. */
    static final String CLUSTERED = "with JpaIdempotencyStore and an Infinispan cache (clustered, replicated)";
    /** Infinispan's line for a new view, or a merged one: "... (2) [example-node-1, example-node-2]". */
    static final Pattern VIEW = Pattern.compile("ISPN00009[34]: .*?\\((\\d+)\\) \\[([^\\]]*)\\]");
    /** Infinispan's line when it builds its own default JGroups stack instead of using the library's. */
    static final String DEFAULT_STACK = "ISPN000088";
    /** Infinispan's line for the channel's addresses: "... physical addresses are `[127.0.0.1:7800]`". */
    static final Pattern PHYSICAL = Pattern.compile("ISPN000079: .*physical addresses are `\\[([^\\]]*)\\]`");
    /** The only address the library's stack may bind in these tests ({@code idempotency.cache.bind-address}). */
    static final String LOOPBACK = "127.0.0.1:";
    static final Duration START_TIMEOUT = Duration.ofSeconds(240);
    static final Path LOGS = Paths.get("target", "cluster-logs").toAbsolutePath();

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final dev.idempotency.testing.TcpProxy proxy;
    private final Node[] nodes = {new Node(1), new Node(2)};
    private final String pgHost = env("PGHOST", "127.0.0.1");
    private final int pgPort = Integer.parseInt(env("PGPORT", "5432"));
    private final String pgDatabase = env("PGDATABASE", "test");
    private final String pgUser = env("PGUSER", "postgres");
    private final String pgPassword = env("PGPASSWORD", "postgres");

    private ExampleCluster() throws IOException {
        proxy = new dev.idempotency.testing.TcpProxy(pgHost, pgPort);
        Files.createDirectories(LOGS);
    }

    /** Resolves a test's {@code ExampleCluster} parameter: the one of this JVM, both nodes up. */
    static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == ExampleCluster.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            ExampleCluster cluster = context.getRoot().getStore(ExtensionContext.Namespace.create(ExampleCluster.class))
                    .getOrComputeIfAbsent(ExampleCluster.class, k -> {
                        try {
                            return new ExampleCluster();
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }, ExampleCluster.class);
            try {
                cluster.ensureRunning();
            } catch (Exception e) {
                throw new IllegalStateException("The example's two nodes did not start: " + e.getMessage(), e);
            }
            return cluster;
        }
    }

    /** Node 1 or 2. */
    Node node(int n) {
        return nodes[n - 1];
    }

    /**
     * Both nodes up and clustered, the store reachable: starts whatever is not running (both at once on the
     * first call), and waits for them.
     */
    synchronized void ensureRunning() throws Exception {
        proxy.restore();
        for (Node n : nodes) {
            if (!n.isAlive()) {
                n.start();
            }
        }
        for (Node n : nodes) {
            n.awaitReady();
        }
        awaitView(2);
    }

    /** Waits until node 1's latest cluster view has {@code members} members. */
    void awaitView(int members) throws Exception {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            node(1).checkJGroupsStack();
            node(2).checkJGroupsStack();
            int now1 = node(1).viewSize();
            int now2 = node(2).viewSize();
            if (now1 == members && now2 == members) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the cluster views are " + now1 + " and " + now2 + " members, not " + members
                        + "; see " + LOGS);
            }
            Thread.sleep(100);
        }
    }

    /** A JDBC connection straight to PostgreSQL (not through the proxy). */
    Connection database() throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + pgHost + ":" + pgPort + "/" + pgDatabase, pgUser, pgPassword);
    }

    URI uri(int node, String path) {
        return URI.create("http://127.0.0.1:" + node(node).httpPort + "/" + path);
    }

    /** {@code POST /api/ops/cache/flush} on one node: the cache is emptied on both. */
    int flushCache(int node) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(node, "api/ops/cache/flush")).POST(HttpRequest.BodyPublishers.noBody())
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString("ops:ops-pw".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** A field of {@code GET /api/payments/stats} on one node. */
    long stat(int node, String field) throws Exception {
        String json = http.send(HttpRequest.newBuilder(uri(node, "api/payments/stats")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*(\\d+)").matcher(json);
        if (!m.find()) {
            throw new AssertionError("no " + field + " in " + json);
        }
        return Long.parseLong(m.group(1));
    }

    @Override
    public void close() throws Exception {
        for (Node n : nodes) {
            n.stop();
        }
        proxy.close();
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    /** One node: its process (the JVM itself) and its log. */
    final class Node {
        final int number;
        final int httpPort;
        private volatile Process process;
        private volatile boolean clustered;
        private volatile String defaultStack;
        private volatile String physical;
        private volatile int viewSize;
        private volatile Path log;
        private int starts;

        Node(int number) {
            this.number = number;
            this.httpPort = 8079 + number;
        }

        boolean isAlive() {
            Process p = process;
            return p != null && p.isAlive();
        }

        Path log() {
            return log;
        }

        int viewSize() {
            return viewSize;
        }

        /** The JGroups channel's physical addresses at this start, as Infinispan logged them, or null before. */
        String physicalAddresses() {
            return physical;
        }

        /**
         * Fails when this start did not run on the library's JGroups stack: Infinispan logged {@value #DEFAULT_STACK}
         * (it ignored {@code idempotency.cache.bind-address}, {@code bind-port}, {@code initial-hosts} and built
         * its default UDP multicast stack), or the channel's physical address is not on 127.0.0.1.
         */
        void checkJGroupsStack() {
            String line = defaultStack;
            if (line != null) {
                throw new AssertionError("node " + number + " runs Infinispan's default JGroups stack (UDP multicast on the"
                        + " host's address), not the library's TCP stack on 127.0.0.1 from idempotency.cache.*: its log ("
                        + log + ") says\n  " + line.strip());
            }
            String addresses = physical;
            if (addresses != null && (addresses.isBlank() || !java.util.Arrays.stream(addresses.split(","))
                    .allMatch(a -> a.strip().startsWith(LOOPBACK)))) {
                throw new AssertionError("node " + number + "'s JGroups channel is on " + addresses + ", not on "
                        + LOOPBACK + "*: the library's stack binds idempotency.cache.bind-address (127.0.0.1); see " + log);
            }
        }

        /** Starts {@code example/node N} with PostgreSQL behind the proxy; returns at once. */
        synchronized void start() throws IOException {
            if (isAlive()) {
                throw new IllegalStateException("node " + number + " is running");
            }
            clustered = false;
            defaultStack = null;
            physical = null;
            viewSize = 0;
            log = LOGS.resolve("node-" + number + "-" + (++starts) + ".log");
            ProcessBuilder pb = new ProcessBuilder(Paths.get("..", "example", "node").toAbsolutePath().normalize().toString(),
                    String.valueOf(number));
            pb.environment().put("PGHOST", "127.0.0.1");
            pb.environment().put("PGPORT", String.valueOf(proxy.port()));
            pb.environment().put("PGDATABASE", pgDatabase);
            pb.environment().put("PGUSER", pgUser);
            pb.environment().put("PGPASSWORD", pgPassword);
            pb.environment().put("PG_POOL_SIZE", String.valueOf(POOL_SIZE));
            // the pool's URL is built from PGHOST and PGPORT (the proxy), not taken from this JVM's environment
            pb.environment().remove("PGURL");
            pb.environment().remove("PG_URL_OPTIONS");
            pb.redirectErrorStream(true);
            Process p = pb.start();
            process = p;
            PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true);
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)); out) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        out.println(line);
                        if (line.contains(CLUSTERED)) {
                            clustered = true;
                        }
                        if (line.contains(DEFAULT_STACK)) {
                            defaultStack = line;
                        }
                        Matcher addresses = PHYSICAL.matcher(line);
                        if (addresses.find()) {
                            physical = addresses.group(1);
                        }
                        Matcher view = VIEW.matcher(line);
                        if (view.find()) {
                            viewSize = Integer.parseInt(view.group(1));
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, "node-" + number + "-log");
            reader.setDaemon(true);
            reader.start();
        }

        /**
         * Waits for the library's "clustered" start-up line, the JGroups channel's address and
         * {@code GET /api/payments/stats} to answer 200; fails at once when the node is not on the library's
         * JGroups stack ({@link #checkJGroupsStack()}).
         */
        void awaitReady() throws Exception {
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (true) {
                checkJGroupsStack();
                if (clustered && physical != null && status() == 200) {
                    break;
                }
                if (!isAlive()) {
                    throw new AssertionError("node " + number + " exited (" + process.exitValue() + ") before it answered; "
                            + "the tail of " + log + ":\n" + tail());
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("node " + number + " did not answer within " + START_TIMEOUT.toSeconds()
                            + " s (the library clustered: " + clustered + ", the JGroups channel's address logged ("
                            + "ISPN000079): " + (physical != null) + "); the tail of " + log + ":\n" + tail());
                }
                Thread.sleep(200);
            }
        }

        int status() {
            try {
                return http.send(HttpRequest.newBuilder(uri(number, "api/payments/stats")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (Exception e) {
                return -1;
            }
        }

        /** SIGKILL to the node's JVM (not a wrapper: {@code example/node} execs java); waits until it is gone. */
        void kill() throws Exception {
            Process p = process;
            Optional<String> command = p.info().command();
            if (command.isPresent() && !command.get().endsWith("java")) {
                throw new AssertionError("node " + number + "'s process is " + command.get() + ", not the JVM");
            }
            List<ProcessHandle> children = p.descendants().toList();
            p.destroyForcibly();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("node " + number + " outlived SIGKILL");
            }
            for (ProcessHandle child : children) {
                child.destroyForcibly();
            }
        }

        /** SIGTERM; SIGKILL after a minute. */
        void stop() throws Exception {
            Process p = process;
            if (p == null || !p.isAlive()) {
                return;
            }
            p.destroy();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }

        /** The exit code of the last process (137 after a SIGKILL), or -1 while it runs. */
        int exitCode() {
            Process p = process;
            return p == null || p.isAlive() ? -1 : p.exitValue();
        }

        String tail() {
            try {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        }
    }
}
