package dev.idempotency.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A MariaDB Galera cluster of three nodes on loopback, started and stopped by the tests themselves (the store on a
 * multi-primary database): {@code mariadbd} processes with data directories under {@code target/galera}, the first
 * bootstrapping the cluster, the others joining it by an rsync state transfer, as user {@code mysql} (as root the
 * rsync transfer is refused). Each node: SQL on {@code 127.0.0.1:341n}, group communication on {@code 46n1}, IST on
 * {@code 46n2}, SST on {@code 46n3}. Needs Debian's {@code galera-4} and MariaDB 10.11 ({@link #assumeAvailable}).
 */
public final class GaleraCluster implements AutoCloseable {

    public static final Path PROVIDER = Path.of("/usr/lib/galera/libgalera_smm.so");
    private static final Path MARIADBD = Path.of("/usr/sbin/mariadbd");
    public static final String USER = "idem";
    public static final String PASSWORD = "idem";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final Path root;
    private final int size;
    private final Process[] processes;

    public GaleraCluster(Path root, int size) {
        this.root = root;
        this.size = size;
        this.processes = new Process[size + 1];
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Process p : processes) {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
        }, "galera-test-cluster-stop"));
    }

    /** Skips (or, when databases are required, fails) the calling test when this machine has no Galera. */
    public static void assumeAvailable() {
        if (Files.isReadable(PROVIDER) && Files.isExecutable(MARIADBD) && onPath("mariadb-install-db") && onPath("rsync")
                && onPath("mariadb")) {
            return;
        }
        String reason = "no Galera here: " + PROVIDER + ", " + MARIADBD + ", mariadb-install-db, mariadb and rsync are needed"
                + " (Debian: apt-get install galera-4 mariadb-server rsync)";
        if ("true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))
                || Boolean.getBoolean("idempotency.test.require-databases")) {
            throw new AssertionError("Required database missing: " + reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    private static boolean onPath(String command) {
        return java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
    }

    public int size() {
        return size;
    }

    public static int sqlPort(int node) {
        return 3410 + node;
    }

    private static int gcommPort(int node) {
        return 4600 + node * 10 + 1;
    }

    /** A JDBC URL for one node; reads wait until the node has applied what the cluster committed before them. */
    public String url(int node) {
        return "jdbc:mariadb://127.0.0.1:" + sqlPort(node) + "/test?sslMode=disable&sessionVariables=wsrep_sync_wait=1";
    }

    private Path dir(int node) {
        return root.resolve("node" + node);
    }

    /** Makes fresh data directories and starts every node: the first bootstraps, the others join one by one. */
    public GaleraCluster start() throws IOException, InterruptedException {
        stopAll();
        killLeftOvers();
        LocalCommands.deleteTree(root);
        Files.createDirectories(root);
        Path first = dir(1);
        LocalCommands.run(List.of("mariadb-install-db", "--no-defaults", "--user=mysql", "--datadir=" + first, "--skip-test-db",
                "--auth-root-authentication-method=socket"));
        for (int node = 2; node <= size; node++) {
            LocalCommands.run(List.of("cp", "-a", first.toString(), dir(node).toString()));
        }
        LocalCommands.run(List.of("chown", "-R", "mysql:mysql", root.toString()));
        startNode(1, true);
        awaitSynced(1);
        admin(1, "CREATE DATABASE IF NOT EXISTS test; CREATE USER IF NOT EXISTS '" + USER + "'@'127.0.0.1' IDENTIFIED BY '"
                + PASSWORD + "'; GRANT ALL ON *.* TO '" + USER + "'@'127.0.0.1';");
        for (int node = 2; node <= size; node++) {
            startNode(node, false);
            awaitSynced(node);
        }
        awaitClusterSize(size);
        return this;
    }

    private void startNode(int node, boolean bootstrap) throws IOException {
        Path d = dir(node);
        String peers = bootstrap ? "" : IntStream.rangeClosed(1, size).filter(n -> n != node)
                .mapToObj(n -> "127.0.0.1:" + gcommPort(n)).collect(Collectors.joining(","));
        List<String> command = new ArrayList<>(List.of(MARIADBD.toString(), "--no-defaults", "--user=mysql",
                "--datadir=" + d, "--socket=" + d.resolve("mysqld.sock"), "--pid-file=" + d.resolve("mysqld.pid"),
                "--port=" + sqlPort(node), "--bind-address=127.0.0.1", "--skip-name-resolve",
                "--log-error=" + d.resolve("error.log"), "--max-connections=400",
                "--binlog-format=ROW", "--default-storage-engine=InnoDB", "--innodb-autoinc-lock-mode=2",
                "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=2",
                "--wsrep-on=ON", "--wsrep-provider=" + PROVIDER, "--wsrep-cluster-name=idempotency-test",
                "--wsrep-cluster-address=gcomm://" + peers, "--wsrep-node-name=node" + node,
                "--wsrep-node-address=127.0.0.1:" + gcommPort(node),
                "--wsrep-provider-options=base_port=" + gcommPort(node) + ";ist.recv_addr=127.0.0.1:" + (gcommPort(node) + 1)
                        + ";gcache.size=64M;pc.weight=1",
                "--wsrep-sst-method=rsync", "--wsrep-sst-receive-address=127.0.0.1:" + (gcommPort(node) + 2)));
        if (bootstrap) {
            command.add("--wsrep-new-cluster");
        }
        processes[node] = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(d.resolveSibling("node" + node + ".out").toFile()).start();
    }

    /** Kills one node's process at once (SIGKILL), as a crash would. */
    public void kill(int node) throws InterruptedException {
        Process p = processes[node];
        if (p != null) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            processes[node] = null;
        }
    }

    /** Starts a killed node again: it rejoins the others and catches up by a state transfer. */
    public void rejoin(int node) throws IOException, InterruptedException {
        Files.deleteIfExists(dir(node).resolve("mysqld.pid"));
        startNode(node, false);
        awaitSynced(node);
        awaitClusterSize(size);
    }

    /** A status value of one node, read through its socket (null when the node does not answer). */
    public String status(int node, String variable) {
        try {
            String out = admin(node, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '"
                    + variable.toUpperCase(java.util.Locale.ROOT) + "'").trim();
            return out.isEmpty() ? null : out;
        } catch (IOException e) {
            return null;
        }
    }

    private void awaitSynced(int node) throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!"Synced".equals(status(node, "wsrep_local_state_comment"))) {
            Process p = processes[node];
            if (p != null && !p.isAlive()) {
                throw new AssertionError("Galera node " + node + " exited with " + p.exitValue() + "; see " + dir(node).resolve("error.log"));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Galera node " + node + " not synced within " + START_TIMEOUT + "; see " + dir(node).resolve("error.log"));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // polling a process, not a stand-in for an event
        }
    }

    private void awaitClusterSize(int n) throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!String.valueOf(n).equals(status(1, "wsrep_cluster_size"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("The Galera cluster did not reach " + n + " nodes");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
    }

    /** Runs SQL as root through a node's socket, and returns what it printed (tab-separated, no headers). */
    public String admin(int node, String sql) throws IOException {
        return LocalCommands.run(List.of("mariadb", "--no-defaults", "--socket=" + dir(node).resolve("mysqld.sock"), "-uroot", "-N", "-B", "-e", sql));
    }

    /** Nodes a test JVM that died left running (their pid files): they would hold the ports. */
    private void killLeftOvers() throws IOException, InterruptedException {
        for (int node = 1; node <= size; node++) {
            Path pid = dir(node).resolve("mysqld.pid");
            if (Files.exists(pid)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).ifPresent(h -> {
                    h.destroyForcibly();
                    h.onExit().join();
                });
            }
        }
    }

    private void stopAll() throws InterruptedException {
        for (int node = size; node >= 1; node--) {
            Process p = processes[node];
            if (p != null) {
                p.destroy(); // SIGTERM: a clean shutdown
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
                processes[node] = null;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        stopAll();
    }
}
