package dev.idempotency.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A PostgreSQL primary and a streaming standby on loopback, made, started and stopped by the tests themselves (a
 * database failover: the primary killed, the standby promoted): {@code initdb}, {@code pg_basebackup -R} and
 * {@code pg_ctl promote} from the machine's PostgreSQL, data directories under {@code target/pg-failover}, the primary
 * on {@code firstPort}, the standby on {@code firstPort + 1}; never the machine's shared PostgreSQL. Run as user
 * {@code postgres} when the tests run as root (PostgreSQL refuses root). Replication is asynchronous, or synchronous
 * ({@code synchronous_standby_names} naming the standby, {@code synchronous_commit = on}: a commit returns once the
 * standby has its WAL on disk). Needs PostgreSQL's server binaries ({@link #assumeAvailable}).
 */
public final class PostgresStandbyPair implements AutoCloseable {

    /** How the primary's commits reach the standby. */
    public enum Replication {
        /** A commit returns once written on the primary; the standby follows as it can (a promotion may lose a suffix). */
        ASYNCHRONOUS,
        /** A commit returns once the standby has flushed it: a promotion loses no commit that returned. */
        SYNCHRONOUS
    }

    public static final String USER = "postgres";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path root;
    private final int firstPort;
    private Replication replication;
    private final List<Long> stopped = new ArrayList<>();

    public PostgresStandbyPair(Path root, int firstPort) {
        this.root = root;
        this.firstPort = firstPort;
        Runtime.getRuntime().addShutdownHook(new Thread(this::killBoth, "pg-failover-test-stop"));
    }

    /** The directory of the machine's PostgreSQL server binaries (the newest installed), if any. */
    static Optional<Path> binaries() {
        Path base = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(base)) {
            return Optional.empty();
        }
        try (var versions = Files.list(base)) {
            return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(java.util.Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString().replaceAll("\\D", "0"))));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Skips (or, when databases are required, fails) the calling test when this machine cannot make the pair. */
    public static void assumeAvailable() {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (binaries().isPresent() && (!root || Files.isExecutable(Path.of("/usr/sbin/runuser")))) {
            return;
        }
        String reason = "no PostgreSQL server binaries here (/usr/lib/postgresql/<version>/bin: initdb, pg_ctl, pg_basebackup)"
                + (root ? ", or no runuser to run them as user postgres" : "") + " (Debian: apt-get install postgresql)";
        if ("true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))
                || Boolean.getBoolean("idempotency.test.require-databases")) {
            throw new AssertionError("Required database missing: " + reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    public int primaryPort() {
        return firstPort;
    }

    public int standbyPort() {
        return firstPort + 1;
    }

    /**
     * The URL an application uses: both hosts, the driver connecting to whichever is the primary (it asks each), giving
     * up on a host that does not answer within 2 s, and on a statement or a commit whose server went silent after 10 s.
     */
    public String url() {
        return "jdbc:postgresql://127.0.0.1:" + primaryPort() + ",127.0.0.1:" + standbyPort()
                + "/postgres?targetServerType=primary&connectTimeout=2&loginTimeout=4&socketTimeout=" + SOCKET_TIMEOUT_SECONDS;
    }

    /** How long a statement or a commit waits on a server that went silent ({@code socketTimeout} in {@link #url()}). */
    public static final int SOCKET_TIMEOUT_SECONDS = 10;

    /** One server's own URL. */
    public String url(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?connectTimeout=2";
    }

    public Replication replication() {
        return replication;
    }

    /** Makes fresh data directories and starts the primary and its standby, streaming. */
    public PostgresStandbyPair start(Replication mode) throws IOException, InterruptedException {
        killBoth();
        LocalCommands.deleteTree(root);
        Files.createDirectories(root);
        own(root);
        this.replication = mode;
        Path primary = dir("primary");
        asPostgres(List.of(bin("initdb"), "-D", primary.toString(), "-U", USER, "--auth=trust", "-N", "-E", "UTF8"));
        Files.writeString(primary.resolve("postgresql.conf"), String.join("\n",
                "", "# the failover tests' pair",
                "port = " + primaryPort(),
                "listen_addresses = '127.0.0.1'",
                "unix_socket_directories = '" + root + "'",
                "wal_level = replica",
                "max_wal_senders = 4",
                "max_connections = 120",
                "shared_buffers = 32MB",
                "fsync = off", // a process killed, not the machine: the OS keeps what was written
                mode == Replication.SYNCHRONOUS ? "synchronous_standby_names = 'standby'" : "synchronous_standby_names = ''",
                "synchronous_commit = on", ""), StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        asPostgres(List.of(bin("pg_ctl"), "-D", primary.toString(), "-l", root.resolve("primary.log").toString(), "-w", "start"));
        Path standby = dir("standby");
        asPostgres(List.of(bin("pg_basebackup"), "-h", "127.0.0.1", "-p", String.valueOf(primaryPort()), "-U", USER,
                "-D", standby.toString(), "-R", "-X", "stream", "-d",
                "host=127.0.0.1 port=" + primaryPort() + " user=" + USER + " application_name=standby"));
        // Promoted, it stands alone: it waits for no standby of its own (the primary's settings came with the backup)
        Files.writeString(standby.resolve("postgresql.conf"), "\nport = " + standbyPort() + "\nsynchronous_standby_names = ''\n",
                StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        asPostgres(List.of(bin("pg_ctl"), "-D", standby.toString(), "-l", root.resolve("standby.log").toString(), "-w", "start"));
        awaitStreaming();
        return this;
    }

    private void awaitStreaming() throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        String wanted = replication == Replication.SYNCHRONOUS ? "sync" : "async";
        while (true) {
            try (Connection c = DriverManager.getConnection(url(primaryPort()), USER, "");
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("select sync_state from pg_stat_replication where application_name = 'standby'"
                         + " and state = 'streaming'")) {
                if (rs.next() && wanted.equals(rs.getString(1))) {
                    return;
                }
            } catch (SQLException e) {
                // not up yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("The standby did not stream (" + wanted + ") within " + START_TIMEOUT + "; see " + root);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // polling a server's view, not a stand-in for an event
        }
    }

    /**
     * Stops the primary's WAL sender (SIGSTOP): from now on nothing the primary commits reaches the standby. With
     * asynchronous replication commits go on (a promotion then loses them); with synchronous replication they wait.
     */
    public void holdReplication() throws IOException {
        for (ProcessHandle child : children(postmaster("primary"))) {
            if (title(child.pid()).contains("walsender")) {
                signal("STOP", child.pid());
                stopped.add(child.pid());
            }
        }
        if (stopped.isEmpty()) {
            throw new IOException("No WAL sender found on the primary");
        }
    }

    /**
     * Silences the primary (SIGSTOP to its postmaster and every backend), as a machine cut off by the network or frozen
     * is: its TCP port still takes connections (the kernel's backlog) and nothing answers on them, so a client waits
     * for its own timeouts rather than seeing the connection refused. Killed with the pair.
     */
    public void silencePrimary() throws IOException {
        long pid = postmaster("primary");
        signal("STOP", pid);
        stopped.add(pid);
        for (ProcessHandle child : children(pid)) {
            signal("STOP", child.pid());
            stopped.add(child.pid());
        }
    }

    /** Kills the primary at once, its postmaster and every backend (SIGKILL), as a crashed machine's database stops. */
    public void killPrimary() throws IOException, InterruptedException {
        long pid = postmaster("primary");
        List<ProcessHandle> all = new ArrayList<>(children(pid));
        ProcessHandle.of(pid).ifPresent(all::add);
        for (ProcessHandle p : all) {
            p.destroyForcibly();
        }
        for (ProcessHandle p : all) {
            try {
                p.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IOException("The primary's process " + p.pid() + " did not end", e);
            }
        }
        stopped.clear();
    }

    /** Promotes the standby: it ends recovery with what it had received, on a new timeline, and takes writes. */
    public void promote() throws IOException, InterruptedException {
        asPostgres(List.of(bin("pg_ctl"), "-D", dir("standby").toString(), "-w", "-t", "60", "promote"));
    }

    /** A server's timeline (1 until a promotion), read from its current WAL file's name. */
    public int timeline(int port) throws SQLException {
        try (Connection c = DriverManager.getConnection(url(port), USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select pg_walfile_name(pg_current_wal_lsn())")) {
            rs.next();
            return Integer.parseInt(rs.getString(1).substring(0, 8), 16);
        }
    }

    private long postmaster(String server) throws IOException {
        Path pid = dir(server).resolve("postmaster.pid");
        return Long.parseLong(Files.readAllLines(pid).get(0).trim());
    }

    /** A server process's title ("postgres: walsender ..."), which PostgreSQL writes over its command line. */
    private static String title(long pid) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", String.valueOf(pid), "cmdline")), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static List<ProcessHandle> children(long pid) {
        return ProcessHandle.of(pid).map(p -> p.children().toList()).orElse(List.of());
    }

    private Path dir(String server) {
        return root.resolve(server);
    }

    private String bin(String tool) {
        return binaries().orElseThrow().resolve(tool).toString();
    }

    private static boolean asRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static void own(Path dir) throws IOException {
        if (asRoot()) {
            LocalCommands.run(List.of("chown", "postgres:postgres", dir.toString()));
        }
    }

    private static void asPostgres(List<String> command) throws IOException {
        List<String> full = new ArrayList<>();
        if (asRoot()) {
            full.addAll(List.of("/usr/sbin/runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        LocalCommands.run(full);
    }

    private static void signal(String signal, long pid) throws IOException {
        LocalCommands.run(List.of("kill", "-" + signal, String.valueOf(pid)));
    }

    /** Kills whatever of the pair runs (this JVM's or one a killed test JVM left): both servers, every process. */
    private void killBoth() {
        for (String server : List.of("primary", "standby")) {
            try {
                long pid = postmaster(server);
                for (long held : stopped) {
                    ProcessHandle.of(held).ifPresent(ProcessHandle::destroyForcibly);
                }
                ProcessHandle.of(pid).ifPresent(p -> {
                    if (p.info().command().orElse("").contains("postgres")) {
                        List<ProcessHandle> all = new ArrayList<>(children(pid));
                        all.add(p);
                        all.forEach(ProcessHandle::destroyForcibly);
                        all.forEach(h -> h.onExit().join());
                    }
                });
            } catch (IOException | RuntimeException e) {
                // not running
            }
        }
        stopped.clear();
    }

    @Override
    public void close() {
        killBoth();
    }
}
