package dev.idempotency.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Infinispan Server nodes of the library's Infinispan line, started from Maven Central's
 * {@code infinispan-server-runtime} (its class path written by the build: src/test/infinispan-server/pom.xml), each in
 * a JVM of its own ({@code org.infinispan.server.Bootstrap}), clustered on loopback (TCPPING): node {@code i} serves
 * Hot Rod on {@code 11222 + 100 i} and talks JGroups on {@code 7900 + 100 i}. Its files live under
 * {@code target/infinispan-server/node-i}. A node can be killed (SIGKILL) and started again; {@link #close()} kills
 * them all, and a later run kills those a dead test JVM left behind (their pid files).
 */
public final class InfinispanServers implements AutoCloseable {

    public static final Path CLASSPATH = Path.of("target", "infinispan-server.classpath");
    private static final Path ROOT = Path.of("target", "infinispan-server");
    private static final int HOT_ROD = 11222;
    private static final int JGROUPS = 7900;

    private final int first;
    private final int count;
    private final String config;
    private final Process[] processes;

    /** Nodes 0 to {@code count - 1}, one cluster. */
    public InfinispanServers(int count) {
        this(0, count);
    }

    /** Nodes {@code first} to {@code first + count - 1}, one cluster of their own. */
    public InfinispanServers(int first, int count) {
        this(first, count, "infinispan.xml");
    }

    /** As above, with another server configuration of src/test/resources/infinispan-server. */
    public InfinispanServers(int first, int count, String config) {
        this.first = first;
        this.count = count;
        this.config = config;
        this.processes = new Process[first + count];
    }

    /** Node {@code i}'s configuration directory (where a server generates its keystore). */
    public static Path conf(int i) {
        return ROOT.resolve("node-" + i).resolve("server").resolve("conf");
    }

    /** Aborts the test with the reason when the build wrote no server class path (a run outside Maven), or fails under CI. */
    public static void assumeAvailable() {
        if (!Files.isRegularFile(CLASSPATH)) {
            String reason = "no Infinispan Server class path at " + CLASSPATH.toAbsolutePath()
                    + "; the build writes it (mvn generate-test-resources)";
            if (Boolean.getBoolean("idempotency.test.require-databases")
                    || "true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))) {
                throw new AssertionError("Infinispan Server missing: " + reason);
            }
            System.out.println("SKIPPED: " + reason);
            Assumptions.abort(reason);
        }
    }

    /** Hot Rod's {@code host:port;host:port} of every node. */
    public String serverList() {
        return IntStream.range(first, first + count).mapToObj(i -> "127.0.0.1:" + hotRodPort(i)).collect(Collectors.joining(";"));
    }

    public static int hotRodPort(int node) {
        return HOT_ROD + 100 * node;
    }

    /** Starts every node (fresh: their data from an earlier run is deleted) and waits until each serves Hot Rod. */
    public InfinispanServers start() throws Exception {
        killLeftovers();
        for (int i = first; i < first + count; i++) {
            LocalCommands.deleteTree(ROOT.resolve("node-" + i));
            start(i);
        }
        return this;
    }

    /** Starts node {@code i} (again, keeping its data) and waits (up to 90 s) until it has started. */
    public void start(int i) throws Exception {
        Path home = ROOT.resolve("node-" + i);
        Path conf = home.resolve("server").resolve("conf");
        Files.createDirectories(conf);
        for (String f : List.of(config, "log4j2.xml", "users.properties", "groups.properties")) {
            try (InputStream in = InfinispanServers.class.getResourceAsStream("/infinispan-server/" + f)) {
                Files.copy(in, conf.resolve(f), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", hotRodPort(i)), 200);
            throw new AssertionError("Port " + hotRodPort(i) + " is taken by another process: the test's Infinispan Server cannot start");
        } catch (IOException expected) {
            // free
        }
        String hosts = IntStream.range(first, first + count).mapToObj(n -> "127.0.0.1[" + (JGROUPS + 100 * n) + "]").collect(Collectors.joining(","));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xms256m", "-Xmx512m",
                "-Djava.net.preferIPv4Stack=true", "-cp", Files.readString(CLASSPATH).strip(),
                "org.infinispan.server.Bootstrap", "-s", home.resolve("server").toAbsolutePath().toString(),
                "-c", config, "-o", String.valueOf(100 * i), "-n", "server-" + i,
                "-Djgroups.tcp.port=" + (JGROUPS + 100 * i), "-Djgroups.tcpping.initial_hosts=" + hosts));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Process p = pb.start();
        processes[i] = p;
        Files.writeString(home.resolve("pid"), String.valueOf(p.pid()));
        CountDownLatch started = new CountDownLatch(1);
        StringBuilder head = new StringBuilder();
        Thread drain = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter log = new PrintWriter(Files.newBufferedWriter(home.resolve("out.log"),
                         StandardOpenOption.CREATE, StandardOpenOption.APPEND), true)) {
                String line;
                while ((line = out.readLine()) != null) {
                    log.println(line);
                    if (started.getCount() > 0) {
                        synchronized (head) {
                            head.append(line).append('\n');
                        }
                        if (line.contains("ISPN080001")) {
                            started.countDown();
                        }
                    }
                }
            } catch (IOException e) {
                // the process died; its log says why
            }
        }, "infinispan-server-" + i + "-output");
        drain.setDaemon(true);
        drain.start();
        if (!started.await(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            synchronized (head) {
                throw new AssertionError("Infinispan Server " + i + " did not start within 90 s:\n" + head);
            }
        }
    }

    /** Kills node {@code i} (SIGKILL): no goodbye to its cluster or its clients. */
    public void kill(int i) throws InterruptedException {
        Process p = processes[i];
        if (p != null) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            processes[i] = null;
        }
    }

    public boolean alive(int i) {
        return processes[i] != null && processes[i].isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = first; i < first + count; i++) {
            kill(i);
        }
    }

    /** Servers that a dead test JVM left running (their pid files), killed. */
    private static void killLeftovers() throws IOException {
        if (!Files.isDirectory(ROOT)) {
            return;
        }
        try (var dirs = Files.list(ROOT)) {
            for (Path dir : dirs.toList()) {
                Path pid = dir.resolve("pid");
                if (Files.isRegularFile(pid)) {
                    ProcessHandle.of(Long.parseLong(Files.readString(pid).strip()))
                            .filter(h -> h.info().commandLine().orElse("").contains("org.infinispan.server.Bootstrap"))
                            .ifPresent(h -> {
                                h.destroyForcibly();
                                h.onExit().orTimeout(30, TimeUnit.SECONDS).join();
                            });
                }
            }
        }
    }
}
