package dev.idempotency.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ClusterNode}s in JVMs of their own, driven over HTTP; stopped (killed) by {@link #close()}. */
final class ClusterProcesses implements AutoCloseable {

    record Node(String name, Process process, URI base) {
    }

    final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    final List<Node> nodes = new ArrayList<>();

    /** Starts a node and waits (up to two minutes) until it serves. */
    Node start(String name, int port, String initialHosts, long leaseMillis, String... extraArgs) throws Exception {
        return start(name, port, initialHosts, leaseMillis, List.of(), extraArgs);
    }

    /** As above, with JVM options (system properties: {@code -Didempotency.test.cache=...}). */
    Node start(String name, int port, String initialHosts, long leaseMillis, List<String> jvmOptions, String... extraArgs)
            throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-Djava.net.preferIPv4Stack=true"));
        command.addAll(jvmOptions);
        command.addAll(List.of(
                "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-" + name,
                "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-" + name,
                "-Dcom.arjuna.ats.arjuna.nodeIdentifier=" + name,
                "-Djava.util.logging.config.file=src/test/resources/logging.properties",
                "-cp", System.getProperty("java.class.path"), ClusterNode.class.getName(),
                name, String.valueOf(port), initialHosts, String.valueOf(leaseMillis)));
        command.addAll(List.of(extraArgs));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.PIPE);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        StringBuilder log = new StringBuilder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while ((line = out.readLine()) != null) {
            log.append(line).append('\n');
            if (line.startsWith("READY ")) {
                Node n = new Node(name, p, URI.create("http://127.0.0.1:" + line.substring(6).strip() + "/"));
                synchronized (nodes) {
                    nodes.add(n);
                }
                // The rest of its output to target/cluster-logs/<name>.log, for a failure's diagnosis.
                Files.createDirectories(Path.of("target", "cluster-logs"));
                PrintWriter file = new PrintWriter(Files.newBufferedWriter(
                        Path.of("target", "cluster-logs", name + ".log")), true);
                file.print(log);
                Thread drain = new Thread(() -> {
                    out.lines().forEach(file::println);
                    file.close();
                }, name + "-output");
                drain.setDaemon(true);
                drain.start();
                return n;
            }
            if (System.nanoTime() > deadline) {
                break;
            }
        }
        p.destroyForcibly();
        throw new AssertionError("node " + name + " did not start:\n" + log);
    }

    String get(Node n, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(n.base().resolve(path)).timeout(Duration.ofSeconds(120)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    CompletableFuture<String> getAsync(Node n, String path) {
        return client.sendAsync(HttpRequest.newBuilder(n.base().resolve(path)).timeout(Duration.ofSeconds(120)).build(),
                HttpResponse.BodyHandlers.ofString()).thenApply(HttpResponse::body);
    }

    /** A duplicate of the finished key is replayed on each node with no SQL (Hibernate's statement count). */
    void assertReplayedWithoutSql(List<Node> these, String key) throws Exception {
        for (Node n : these) {
            long before = Long.parseLong(get(n, "statements"));
            assertThat(get(n, "run?key=" + key)).isEqualTo("replayed");
            assertThat(Long.parseLong(get(n, "statements"))).as(n.name() + " ran no SQL").isEqualTo(before);
        }
    }

    /**
     * Waiters on {@code waiters} are woken by the completion on {@code holder}, not by polling: the lease is two
     * minutes, so only the wake-up can release them within the 30 s this waits. {@code awaitClaimed} returns once the
     * holder's claim is in the store.
     */
    void assertWokenByTheCompletion(Node holder, List<Node> waiters, String key, long observeMillis,
                                    ThrowingRunnable awaitClaimed) throws Exception {
        assertAnswered(holder, waiters, key, observeMillis, 30, awaitClaimed);
    }

    /** As above, the waiters answered within {@code seconds} (woken, or by looking at the store themselves). */
    void assertAnswered(Node holder, List<Node> waiters, String key, long observeMillis, int seconds,
                        ThrowingRunnable awaitClaimed) throws Exception {
        CompletableFuture<String> held = getAsync(holder, "run?hold=true&lease=120000&key=" + key);
        awaitClaimed.run();
        List<CompletableFuture<String>> waiting = new ArrayList<>();
        for (Node n : waiters) {
            waiting.add(getAsync(n, "run?wait=true&lease=120000&key=" + key));
        }
        Thread.sleep(observeMillis); // an observation window (not synchronisation): a poller would query meanwhile
        assertThat(waiting).noneMatch(CompletableFuture::isDone);
        get(holder, "release?key=" + key);
        assertThat(held.get(30, TimeUnit.SECONDS)).isEqualTo("executed");
        for (CompletableFuture<String> w : waiting) {
            assertThat(w.get(seconds, TimeUnit.SECONDS)).isEqualTo("replayed");
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Until each of {@code these} live nodes sees {@code count} members (up to a minute). */
    void awaitMembers(int count, List<Node> these) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Node n : these) {
            if (!n.process().isAlive()) {
                continue;
            }
            while (!get(n, "members").equals(String.valueOf(count))) {
                assertThat(System.nanoTime()).as(n.name() + " sees " + count + " members").isLessThan(deadline);
                Thread.sleep(100);
            }
        }
    }

    @Override
    public void close() throws Exception {
        synchronized (nodes) {
            for (Node n : nodes) {
                n.process().destroyForcibly();
                n.process().waitFor(30, TimeUnit.SECONDS);
            }
            nodes.clear();
        }
    }
}
