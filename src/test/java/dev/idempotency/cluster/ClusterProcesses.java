package dev.idempotency.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-Djava.net.preferIPv4Stack=true",
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
                Thread drain = new Thread(() -> out.lines().forEach(l -> { }), name + "-output");
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
