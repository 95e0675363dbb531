package dev.idempotency.it;

import dev.idempotency.testing.PostgresStandbyPair;
import dev.idempotency.testing.PostgresStandbyPair.Replication;


import java.io.IOException;
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
 * A database failover under HTTP load on a server running the example on a primary and a streaming standby
 * ({@link PostgresStandbyPair}), its pool on the driver's multi-host URL: clients post payments with fresh keys, each
 * retrying a key until it is answered, as a client of an idempotent API does; mid-load the primary is killed (SIGKILL,
 * every process) and the standby promoted {@link #DETECTION} later (a cluster manager's detection time); the load goes
 * on, on the same server, which is not restarted. Then every answered key is posted once more, and the surviving
 * database's payments counted. With asynchronous replication the primary's WAL sender is held for its last answers
 * first, so that the promotion loses them, and the cache is flushed after the promotion, as the guide says to. With
 * synchronous replication it is held {@link #COMMITS_WAIT} before the kill, so that every client's commit is cut off
 * while it waits for the standby: an outcome the server cannot know, which must never become an answer.
 * Readiness ({@code /health/ready}) is watched throughout where the server has MicroProfile Health.
 */
final class FailoverUnderLoad {

    static final int CLIENTS = 8;
    /** Answers before the kill and after the promotion at least ({@code -Dfailover.answers}: bench/failover's runs). */
    static final int ANSWERS = Integer.getInteger("failover.answers", 200);
    /**
     * How long after the kill the standby is promoted: a cluster manager's time to decide that the primary is dead
     * (Patroni's loop is 10 s by default). Longer than the readiness check's bound on its read (4 s), so that readiness
     * has a primary-less moment to report: a shorter gap is bridged by the JPA provider's retries of a read whose
     * connection failed (EclipseLink: 3 more tries, a second apart), and readiness stays UP through it.
     */
    static final Duration DETECTION = Duration.ofSeconds(10);
    /** How long, with synchronous replication, the clients' commits wait for a standby that takes nothing, before the kill. */
    static final Duration COMMITS_WAIT = Duration.ofSeconds(1);
    static final Path RESULTS = Paths.get("target").toAbsolutePath().resolve("failover").resolve("results.txt");

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final String server;
    final URI base;
    final PostgresStandbyPair pair;
    final Replication replication;
    final boolean readiness;
    final Path log;

    /**
     * @param server    the server's name in the results
     * @param base      the example's root ({@code .../api/payments} below it)
     * @param readiness whether the server answers {@code /health/ready} (MicroProfile Health)
     * @param log       the server's log, whose tail a failure shows
     */
    FailoverUnderLoad(String server, URI base, PostgresStandbyPair pair, Replication replication, boolean readiness, Path log) {
        this.server = server;
        this.base = base;
        this.pair = pair;
        this.replication = replication;
        this.readiness = readiness;
        this.log = log;
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
        /** Each client's call under way: when it began ({@link System#nanoTime()}). */
        final Map<String, Long> underWay = new ConcurrentHashMap<>();

        void error(String kind, String sample) {
            errors.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
            samples.putIfAbsent(kind, sample);
        }
    }

    /** Runs the load, fails the primary over, and asserts what every client got; one line of figures to the results. */
    void run() throws Exception {
        Tally tally = new Tally();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS + 1);
        try {
            // Readiness, every 100 ms from the start: each sample's time since the kill (negative before) and status
            ConcurrentLinkedQueue<long[]> ready = new ConcurrentLinkedQueue<>();
            Future<?> watch = clients.submit(() -> {
                while (!stop.get() && readiness) {
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
            if (replication == Replication.ASYNCHRONOUS) {
                int held = tally.first.size();
                pair.holdReplication(); // what the primary commits from now on is lost with it
                awaitAnswers(tally.first::size, held + ANSWERS / 2, "answers the standby does not get");
            } else {
                // The worst moment for synchronous replication: the standby stops taking the primary's WAL, so every
                // client's commit is waiting for it when the primary dies. Each such commit's outcome is unknown to
                // the server (WildFly reports it to the library as committed, then throws): none may be answered later.
                pair.holdReplication();
                LockSupport.parkNanos(COMMITS_WAIT.toNanos()); // the commits under way pile up; not a synchronisation
            }
            // Calls under way since before the standby stopped taking WAL: waiting in their commits, which the kill cuts off
            long beforeTheKill = System.nanoTime();
            long cutOff = tally.underWay.values().stream()
                    .filter(began -> beforeTheKill - began > COMMITS_WAIT.toNanos() / 2).count();
            pair.killPrimary();
            long killed = System.nanoTime();
            tally.killedAt.set(killed);
            LockSupport.parkNanos(DETECTION.toNanos()); // the cluster manager's detection time, not a synchronisation
            pair.promote();
            long promoted = System.nanoTime() - killed;
            if (replication == Replication.ASYNCHRONOUS) {
                // The guide's advice: answers cached from commits the promotion lost must not be replayed
                assertThat(flushCache()).as("the cache flushed").isEqualTo(204);
            }
            awaitAnswers(tally.answersAfterKill::get, Math.max(ANSWERS, CLIENTS * 20), "answers after the promotion");
            if (readiness) {
                awaitAnswers(() -> upAgain(ready) > 0 ? 1 : 0, 1, "readiness UP again after it was DOWN");
            }
            stop.set(true);
            for (Future<?> f : running) {
                f.get(120, TimeUnit.SECONDS);
            }
            watch.get(30, TimeUnit.SECONDS);

            // Readiness: DOWN while no primary answered, UP again once one did, without a restart
            long downAfterKill = ready.stream().filter(s -> s[0] >= 0 && s[1] == 503).count();
            Map<Long, Long> readinessAfterKill = new TreeMap<>(ready.stream().filter(s -> s[0] >= 0)
                    .collect(java.util.stream.Collectors.groupingBy(s -> s[1], java.util.stream.Collectors.counting())));
            long lastReadiness = ready.stream().reduce((a, b) -> b).map(sample -> sample[1]).orElse(-1L);
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
                    "HTTP %-14s %-12s keys answered %5d | commits cut off at the kill %d | charged twice %d | answer changed on a late retry %3d"
                            + " | never answered %d | promotion %4d ms after the kill | first answer %5d ms after the kill"
                            + " | readiness after the kill %s, UP again %5d ms after the kill | slowest call %5d ms | meanwhile %s",
                    server, replication, tally.first.size(), cutOff, twice, changed, tally.neverAnswered.get(), TimeUnit.NANOSECONDS.toMillis(promoted),
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
            if (readiness) {
                assertThat(downAfterKill).as("readiness DOWN while no primary answered").isPositive();
                assertThat(firstUpAgain).as("readiness UP again after the promotion").isPositive();
                assertThat(lastReadiness).as("readiness at the end").isEqualTo(200);
            }
            if (replication == Replication.SYNCHRONOUS) {
                assertThat(changed).as("with synchronous replication every answer survives the failover").isZero();
                assertThat(cutOff).as("calls waiting in their commits when the primary died (else this run proved nothing"
                        + " about a commit cut off)").isPositive();
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
                tally.underWay.put(prefix, started);
                String kind;
                String sample;
                try {
                    HttpResponse<byte[]> r = post(key);
                    tally.slowest.accumulateAndGet(System.nanoTime() - started, Math::max);
                    if (r.statusCode() == 201) {
                        tally.underWay.remove(prefix);
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
                tally.underWay.remove(prefix);
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
        return readiness(http, base);
    }

    /** {@code GET /health/ready}'s status on a server, or -1 when it did not answer. */
    static int readiness(HttpClient http, URI server) {
        try {
            return http.send(HttpRequest.newBuilder(server.resolve("/health/ready")).timeout(Duration.ofSeconds(10)).build(),
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
        return base.resolve(path);
    }

    void awaitAnswers(IntSupplier count, int atLeast, String what) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (count.getAsInt() < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": " + count.getAsInt() + " within 120 s, not " + atLeast + "; the tail of "
                        + log + ":\n" + HttpCrashIT.tail(log));
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

    static void record(String line) throws IOException {
        System.out.println("FAILOVER " + line);
        Files.createDirectories(RESULTS.getParent());
        Files.writeString(RESULTS, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

}
