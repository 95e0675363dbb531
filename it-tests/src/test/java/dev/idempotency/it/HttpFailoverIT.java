package dev.idempotency.it;

import dev.idempotency.testing.PostgresStandbyPair;
import dev.idempotency.testing.PostgresStandbyPair.Replication;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A database failover under HTTP load, in a real server: Payara Micro with the example, its PostgreSQL pool the
 * example's own ({@code example/src/main/payara/postgresql.asadmin}: validation when a connection is handed out, all
 * dropped when one fails) on the driver's multi-host URL ({@code PGURL}, {@code targetServerType=primary}) over a
 * primary and a streaming standby the test makes ({@link PostgresStandbyPair}, ports 5443 and 5444). Clients post
 * payments with fresh keys, each retrying a key until it is answered, as a client of an idempotent API does. Mid-load
 * the primary is killed (SIGKILL, every process) and the standby promoted ten seconds later (a cluster manager's
 * detection time); the load goes on, on the same server, which is not restarted. Then every answered key is posted
 * once more, and the surviving database's payments counted.
 *
 * <p>Synchronous replication by default (the CI run); {@code -Dfailover.replication=ASYNCHRONOUS} holds the primary's
 * WAL sender for its last answers first, so that the promotion loses them, and flushes the cache after the promotion,
 * as the guide says to; {@code -Dfailover.answers=N} sets how many answers come before the kill and after the
 * promotion (the longer runs of {@code bench/failover}). Figures go to {@code target/failover/results.txt}.
 *
 * <p>Runs in the payara profile only (it starts its own server and databases; not Arquillian).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpFailoverIT {

    static final int CLIENTS = 8;
    static final int ANSWERS = Integer.getInteger("failover.answers", 200);
    static final Replication REPLICATION = Replication.valueOf(System.getProperty("failover.replication", "SYNCHRONOUS"));
    /**
     * How long after the kill the standby is promoted: a cluster manager's time to decide that the primary is dead
     * (Patroni's loop is 10 s by default). Longer than the readiness check's bound on its read (4 s), so that readiness
     * has a primary-less moment to report: a shorter gap is bridged by the JPA provider's retries of a read whose
     * connection failed (EclipseLink: 3 more tries, a second apart), and readiness stays UP through it.
     */
    static final Duration DETECTION = Duration.ofSeconds(10);
    static final Path TARGET = Paths.get("target").toAbsolutePath();
    static final Path RESULTS = TARGET.resolve("failover").resolve("results.txt");
    /** The example's pool (postgresql.env's timeouts) on both hosts, the driver connecting to the primary. */
    static final String URL_OPTIONS = "targetServerType=primary&connectTimeout=3&loginTimeout=5&socketTimeout=12";

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    PostgresStandbyPair pair;
    Process server;
    Path log;
    int port;

    @BeforeAll
    void start() throws Exception {
        PostgresStandbyPair.assumeAvailable();
        pair = new PostgresStandbyPair(TARGET.resolve("pg-failover"), 5443);
        pair.start(REPLICATION);
        port = freePort();
        log = TARGET.resolve("failover-payara.log");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Path example = Paths.get("..", "example").toAbsolutePath().normalize();
        // As example/node starts it: the pool's settings from postgresql.env, here a URL naming both servers
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", "source src/main/payara/postgresql.env && exec \"$0\" -Xmx1g -jar \"$1\""
                + " --nocluster --port \"$2\" --contextroot / --addLibs target/postgresql.jar"
                + " --postbootcommandfile src/main/payara/postgresql.asadmin --deploy \"$3\"",
                java, property("payara.microJar"), String.valueOf(port), property("example.war"));
        pb.directory(example.toFile());
        pb.environment().put("PGURL", "jdbc:postgresql://127.0.0.1:" + pair.primaryPort() + ",127.0.0.1:" + pair.standbyPort()
                + "/postgres?" + URL_OPTIONS);
        pb.environment().put("PGUSER", PostgresStandbyPair.USER);
        pb.environment().put("PGPASSWORD", "unused"); // the pair trusts loopback
        pb.environment().put("PG_POOL_SIZE", "16");
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        server = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!Files.readString(log, StandardCharsets.ISO_8859_1).contains(" ready in ") || readiness() != 200) {
            if (!server.isAlive()) {
                throw new AssertionError("Payara Micro exited (" + server.exitValue() + ") before it answered; the tail of "
                        + log + ":\n" + tail());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Payara Micro did not answer on " + port + " within 180 s; the tail of " + log + ":\n" + tail());
            }
            Thread.sleep(500);
        }
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null && server.isAlive()) {
            server.destroy();
            if (!server.waitFor(60, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        if (pair != null) {
            pair.close();
        }
    }

    /** What the load saw. */
    static final class Tally {
        final Map<String, HttpResponse<byte[]>> first = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        final Map<String, String> samples = new ConcurrentHashMap<>();
        final AtomicLong killedAt = new AtomicLong();
        final AtomicLong firstAnswerAfterKill = new AtomicLong();
        final AtomicInteger answersAfterKill = new AtomicInteger();
        final AtomicLong slowest = new AtomicLong();
        final AtomicInteger neverAnswered = new AtomicInteger();

        void error(String kind, String sample) {
            errors.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
            samples.putIfAbsent(kind, sample);
        }
    }

    @Test
    void theExampleOnAMultiHostUrlAnswersEveryClientAcrossAFailoverWithoutARestartAndChargesNoKeyTwice() throws Exception {
        Tally tally = new Tally();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS + 1);
        try {
            // Readiness, every 100 ms from the start: each sample's time since the kill (negative before) and status
            ConcurrentLinkedQueue<long[]> ready = new ConcurrentLinkedQueue<>();
            Future<?> watch = clients.submit(() -> {
                while (!stop.get()) {
                    long killed = tally.killedAt.get();
                    long at = System.nanoTime();
                    ready.add(new long[] {killed == 0 ? -1 : at - killed, readiness()});
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // the probe's period
                }
            });
            String prefix = "fo-" + Long.toString(System.currentTimeMillis(), 36);
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int id = c;
                running.add(clients.submit(() -> client(prefix + "-c" + id, stop, tally)));
            }
            awaitAnswers(tally.first::size, ANSWERS, "answers before the failover");
            if (REPLICATION == Replication.ASYNCHRONOUS) {
                int held = tally.first.size();
                pair.holdReplication(); // what the primary commits from now on is lost with it
                awaitAnswers(tally.first::size, held + ANSWERS / 2, "answers the standby does not get");
            }
            pair.killPrimary();
            long killed = System.nanoTime();
            tally.killedAt.set(killed);
            LockSupport.parkNanos(DETECTION.toNanos()); // the cluster manager's detection time, not a synchronisation
            pair.promote();
            long promoted = System.nanoTime() - killed;
            if (REPLICATION == Replication.ASYNCHRONOUS) {
                // The guide's advice: answers cached from commits the promotion lost must not be replayed
                assertThat(flushCache()).as("the cache flushed").isEqualTo(204);
            }
            awaitAnswers(tally.answersAfterKill::get, Math.max(ANSWERS, CLIENTS * 20), "answers after the promotion");
            awaitAnswers(() -> upAgain(ready) > 0 ? 1 : 0, 1, "readiness UP again after it was DOWN");
            stop.set(true);
            for (Future<?> f : running) {
                f.get(120, TimeUnit.SECONDS);
            }
            watch.get(30, TimeUnit.SECONDS);

            // Readiness: DOWN while no primary answered, UP again once one did, without a restart
            long downAfterKill = ready.stream().filter(s -> s[0] >= 0 && s[1] == 503).count();
            Map<Long, Long> readinessAfterKill = new TreeMap<>(ready.stream().filter(s -> s[0] >= 0)
                    .collect(java.util.stream.Collectors.groupingBy(s -> s[1], java.util.stream.Collectors.counting())));
            long[] lastSample = ready.stream().reduce((a, b) -> b).orElseThrow();
            long firstUpAgain = upAgain(ready);

            // Late retries: the first answer again, byte for byte, exactly when the payment it names survived
            Set<String> surviving = paymentIds();
            Map<String, Integer> perReference = paymentsPerReference(prefix);
            int changed = 0;
            List<String> wrong = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            for (Map.Entry<String, HttpResponse<byte[]>> e : new TreeMap<>(tally.first).entrySet()) {
                String location = e.getValue().headers().firstValue("Location").orElse("");
                boolean kept = surviving.contains(location.substring(location.lastIndexOf('/') + 1));
                HttpResponse<byte[]> late = post(e.getKey());
                if (late.statusCode() != 201) {
                    refused.add(e.getKey() + ": " + text(late));
                    continue;
                }
                boolean same = Arrays.equals(late.body(), e.getValue().body());
                if (!same) {
                    changed++;
                }
                if (same != kept || same != "true".equals(late.headers().firstValue("Idempotent-Replayed").orElse(""))) {
                    wrong.add(e.getKey() + ": first " + text(e.getValue()) + (kept ? " (its payment kept)" : " (its payment lost)")
                            + ", late " + text(late));
                }
            }
            long twice = perReference.values().stream().filter(n -> n > 1).count();
            long unanswered = perReference.keySet().stream().filter(k -> !tally.first.containsKey(k)).count();

            String line = String.format(Locale.ROOT,
                    "HTTP Payara Micro 6 %-12s keys answered %5d | charged twice %d | answer changed on a late retry %3d"
                            + " | never answered %d | promotion %4d ms after the kill | first answer %5d ms after the kill"
                            + " | readiness after the kill %s, UP again %5d ms after the kill | slowest call %5d ms | meanwhile %s",
                    REPLICATION, tally.first.size(), twice, changed, tally.neverAnswered.get(), TimeUnit.NANOSECONDS.toMillis(promoted),
                    TimeUnit.NANOSECONDS.toMillis(tally.firstAnswerAfterKill.get()), readinessAfterKill,
                    TimeUnit.NANOSECONDS.toMillis(firstUpAgain), TimeUnit.NANOSECONDS.toMillis(tally.slowest.get()),
                    new TreeMap<>(tally.errors));
            record(line);

            assertThat(twice).as("keys charged twice in the surviving database").isZero();
            assertThat(refused).as("late retries refused").isEmpty();
            assertThat(wrong).as("late retries replay the first answer, byte for byte, exactly when its payment survived").isEmpty();
            assertThat(tally.neverAnswered.get()).as("clients never answered").isZero();
            assertThat(tally.errors.keySet()).as("what callers got during the failover (samples: " + tally.samples + ")")
                    .isSubsetOf("503 problem with Retry-After", "409 in progress");
            assertThat(unanswered).as("payments of a key no client was answered for (a call in flight at the kill)")
                    .isLessThanOrEqualTo(CLIENTS);
            // A killed primary's connections fail at once; a new one to it is refused at once: no call waits for a bound
            assertThat(TimeUnit.NANOSECONDS.toSeconds(tally.slowest.get())).as("the slowest call (s)").isLessThanOrEqualTo(10);
            assertThat(downAfterKill).as("readiness DOWN while no primary answered").isPositive();
            assertThat(firstUpAgain).as("readiness UP again after the promotion").isPositive();
            assertThat(lastSample[1]).as("readiness at the end").isEqualTo(200);
            if (REPLICATION == Replication.SYNCHRONOUS) {
                assertThat(changed).as("with synchronous replication every answer survives the failover").isZero();
            }
        } finally {
            stop.set(true);
            clients.shutdownNow();
            clients.awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    /** The time after the kill of the first readiness sample UP after one DOWN, or -1 if none yet. */
    static long upAgain(java.util.Collection<long[]> samples) {
        long down = -1;
        for (long[] sample : samples) {
            if (sample[0] >= 0 && sample[1] == 503 && down < 0) {
                down = sample[0];
            } else if (down >= 0 && sample[0] > down && sample[1] == 200) {
                return sample[0];
            }
        }
        return -1;
    }

    /** A client: fresh keys one after the other, each posted until answered (50 ms between tries); 60 s at most a key. */
    void client(String prefix, AtomicBoolean stop, Tally tally) {
        for (int n = 0; !stop.get(); n++) {
            String key = prefix + "-" + n;
            long first = System.nanoTime();
            while (true) {
                long started = System.nanoTime();
                String kind;
                String sample;
                try {
                    HttpResponse<byte[]> r = post(key);
                    tally.slowest.accumulateAndGet(System.nanoTime() - started, Math::max);
                    if (r.statusCode() == 201) {
                        tally.first.put(key, r);
                        long killed = tally.killedAt.get();
                        if (killed != 0 && started > killed) {
                            tally.firstAnswerAfterKill.compareAndSet(0, System.nanoTime() - killed);
                            tally.answersAfterKill.incrementAndGet();
                        }
                        break;
                    }
                    boolean problem = r.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json");
                    boolean retryAfter = r.headers().firstValue("Retry-After").isPresent();
                    kind = r.statusCode() == 503 && problem && retryAfter ? "503 problem with Retry-After"
                            : r.statusCode() == 409 && retryAfter ? "409 in progress" : "status " + r.statusCode();
                    sample = text(r);
                } catch (Exception e) {
                    tally.slowest.accumulateAndGet(System.nanoTime() - started, Math::max);
                    kind = e.getClass().getName();
                    sample = String.valueOf(e);
                }
                tally.error(kind, sample);
                if (System.nanoTime() - first > TimeUnit.SECONDS.toNanos(60) || Thread.currentThread().isInterrupted()) {
                    tally.neverAnswered.incrementAndGet();
                    return;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the client's pause between tries
            }
        }
    }

    HttpResponse<byte[]> post(String key) throws Exception {
        return http.send(HttpRequest.newBuilder(uri("api/payments")).header("Content-Type", "application/json")
                .header("Idempotency-Key", key).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":100,\"currency\":\"EUR\",\"reference\":\"" + key + "\"}"))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** {@code GET /health/ready}'s status, or -1 when the server did not answer. */
    int readiness() {
        try {
            return http.send(HttpRequest.newBuilder(uri("health/ready")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** {@code POST /api/ops/cache/flush} as the example's operator. */
    int flushCache() throws Exception {
        return http.send(HttpRequest.newBuilder(uri("api/ops/cache/flush")).POST(HttpRequest.BodyPublishers.noBody())
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("ops:ops-pw".getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + "/" + path);
    }

    void awaitAnswers(IntSupplier count, int atLeast, String what) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (count.getAsInt() < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": " + count.getAsInt() + " within 120 s, not " + atLeast + "; the tail of "
                        + log + ":\n" + tail());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // watching the load's progress
        }
    }

    /** The payments' ids in the surviving database (the promoted standby). */
    Set<String> paymentIds() throws SQLException {
        Set<String> ids = new java.util.HashSet<>();
        try (Connection c = DriverManager.getConnection(pair.url(pair.standbyPort()), PostgresStandbyPair.USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select id from example_payment")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }

    /** This run's payments per reference (the key) in the surviving database. */
    Map<String, Integer> paymentsPerReference(String prefix) throws SQLException {
        Map<String, Integer> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(pair.url(pair.standbyPort()), PostgresStandbyPair.USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select reference, count(*) from example_payment where reference like '"
                     + prefix + "-%' group by reference")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        }
        return rows;
    }

    static String text(HttpResponse<byte[]> r) {
        return r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }

    String tail() throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    static void record(String line) throws IOException {
        System.out.println("FAILOVER " + line);
        Files.createDirectories(RESULTS.getParent());
        Files.writeString(RESULTS, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    static String property(String name) {
        String value = System.getProperty(name);
        assertThat(value).as("system property " + name + " (set by the payara profile)").isNotBlank();
        return value;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
