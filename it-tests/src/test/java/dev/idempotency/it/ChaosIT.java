package dev.idempotency.it;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chaos test (issue 16, item 7): the two clustered nodes of the example on PostgreSQL
 * ({@link ExampleCluster}), a few thousand keys from several client threads, while node 2 is SIGKILLed and
 * started again, the cache is flushed and the store is unreachable for a few seconds.
 *
 * <p>The keys: plain ones; slow ones ({@code delayMillis}); failing ones ({@code fail: true}: 500 every time,
 * no row); bursts of five concurrent duplicates over both nodes; keys reused with another amount, after the
 * first answer (422) or while the first runs (one of the two wins, the other gets 409s, then 422). A third are
 * retried: at once on the other node, or later (after some hundreds of other keys). A client treats a
 * connection error (the killed node), a 409 and a 503 (the store outage) as "try again" with the same key and
 * body, on the other node, until it gets a definitive answer (2xx, 422, or the failing keys' 500).
 *
 * <p>The chaos is driven by progress (keys finished), and key hand-out waits at gates for the chaos to be
 * done, so that it always falls inside the traffic: at 15% node 2 is killed, at 20% it is started again
 * (keys from 45% on wait for it to be back in the cluster); at 55% the cache is flushed; at 70% the store
 * is cut for {@link #OUTAGE} (keys from 85% on wait for the restore). Afterwards every key is sent once more
 * (replay, or 422), and the payment rows are counted in PostgreSQL.
 *
 * <p>It holds when: exactly one payment row per key that was ever answered 2xx and none for the others; every
 * 2xx of a key byte-identical (same payment) and at most one of them not a replay; every reuse ends in 422
 * and its loser never got a 2xx; no 5xx but the failing keys' 500 and 503 during the outage (answered up to
 * {@link #OUTAGE_GRACE} after the restore); no key without its definitive answer. A 503 is the library's
 * ({@value #STORE_UNAVAILABLE}: the claim, the replay or the completion could not reach the store) or the
 * example's ({@value #DATABASE_UNAVAILABLE}: a request claimed before the cut whose payment INSERT then lost
 * its database; its transaction rolls back, claim included, so the key is free). A 500 of a key that does not
 * fail is a violation, whatever its cause. {@code -Dchaos.keys},
 * {@code -Dchaos.threads} and {@code -Dchaos.seed} change the run; the seed is printed with the counts.
 */
@ExtendWith(ExampleCluster.Extension.class)
class ChaosIT {

    static final int KEYS = Integer.getInteger("chaos.keys", 2400);
    static final int THREADS = Integer.getInteger("chaos.threads", 8);
    static final long SEED = Long.getLong("chaos.seed", System.nanoTime());
    static final int BURST = 5;
    static final Duration OUTAGE = Duration.ofSeconds(3);
    /**
     * How long after the restore a 503 may still be answered: a request whose store call failed just before it,
     * answered a little later (its rollback, its exception logged). The store is reachable again at once; the
     * pool validates every connection it hands out, so no request after the restore gets a dead one.
     */
    static final Duration OUTAGE_GRACE = Duration.ofSeconds(2);
    /** The library's 503: its own store calls failed. */
    static final String STORE_UNAVAILABLE = "https://idempotency.dev/problems/store-unavailable";
    /** The example's 503 (its {@code DatabaseUnavailable} mapper): the application's own statement lost its database. */
    static final String DATABASE_UNAVAILABLE = "https://idempotency.dev/example/problems/database-unavailable";
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
    static final Duration KEY_DEADLINE = Duration.ofMinutes(3);
    static final Duration CHAOS_DEADLINE = Duration.ofMinutes(6);

    /** A client-side outcome instead of a status. */
    static final int CONNECTION_ERROR = -1;
    static final int TIMEOUT = -2;

    enum Kind { PLAIN, SLOW, FAIL, BURST, REUSE_AFTER, REUSE_DURING }

    enum Retry { NONE, OTHER_NODE_NOW, LATER }

    /** One answer to one request: which body ('A', or the reuse's 'B'), where, when, what. */
    record Answer(char body, int node, int status, boolean replayed, byte[] bytes, String location, String retryAfter,
                  long at, String error, boolean sweep) {
        boolean success() {
            return status >= 200 && status < 300;
        }

        String text() {
            return status + (replayed ? " (replayed)" : "") + " from node " + node + " at " + millis(at) + " ms"
                    + (error != null ? ": " + error : bytes == null ? "" : ": " + brief(bytes));
        }

        String bodyText() {
            return bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8);
        }
    }

    static final class Key {
        final int index;
        final String id;
        final Kind kind;
        final Retry retry;
        final String bodyA;
        final String bodyB;
        final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());

        Key(int index, String id, Kind kind, Retry retry, String bodyA, String bodyB) {
            this.index = index;
            this.id = id;
            this.kind = kind;
            this.retry = retry;
            this.bodyA = bodyA;
            this.bodyB = bodyB;
        }

        String body(char which) {
            return which == 'A' ? bodyA : bodyB;
        }

        List<Answer> answers() {
            synchronized (answers) {
                return new ArrayList<>(answers);
            }
        }

        @Override
        public String toString() {
            return id + " (" + kind + ", retry " + retry + ")";
        }
    }

    /** When the chaos started: the timeline's zero. */
    static volatile long t0 = System.nanoTime();

    ExampleCluster cluster;
    Key[] keys;
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicInteger next = new AtomicInteger();
    final AtomicInteger completed = new AtomicInteger();
    final Object progress = new Object();
    /** Node n is in the clients' rotation: up[n - 1] == 1. */
    final AtomicIntegerArray up = new AtomicIntegerArray(new int[] {1, 1});
    final CountDownLatch rejoined = new CountDownLatch(1);
    final CountDownLatch flushed = new CountDownLatch(1);
    final CountDownLatch restored = new CountDownLatch(1);
    final ExecutorService duplicates = Executors.newCachedThreadPool(daemon("chaos-duplicate"));
    volatile long chaosDeadline;
    volatile long killAt;
    volatile long node2BackAt;
    volatile long flushAt;
    volatile long cutAt;
    volatile long restoredAt;

    @Test
    @DisplayName("A few thousand keys over two nodes while a node is SIGKILLed and restarted, the cache flushed "
            + "and the store cut: one row per 2xx key, identical 2xx bodies, 422 for reuse, no stray 5xx, nothing lost")
    void chaos(ExampleCluster cluster) throws Exception {
        this.cluster = cluster;
        String run = Long.toString(SEED & 0xffffffffL, 36) + Long.toString(System.currentTimeMillis() % 1_000_000, 36);
        plan("chaos-" + run + "-");
        long started = System.nanoTime();
        t0 = started;
        chaosDeadline = started + CHAOS_DEADLINE.toNanos();

        ExecutorService workers = Executors.newFixedThreadPool(THREADS, daemon("chaos-client"));
        List<Future<?>> running = new ArrayList<>();
        for (int w = 0; w < THREADS; w++) {
            long seed = SEED + w;
            running.add(workers.submit(() -> work(new Random(seed))));
        }
        int flushStatus = -1;
        int killedExit = -1;
        Throwable chaosFailed = null;
        try {
            awaitProgress(percent(15));
            killAt = System.nanoTime();
            cluster.node(2).kill();
            up.set(1, 0);
            killedExit = cluster.node(2).exitCode();

            awaitProgress(percent(20));
            cluster.node(2).start();
            cluster.node(2).awaitReady();
            cluster.awaitView(2);
            node2BackAt = System.nanoTime();
            burstAfterRestart("burst-" + run + "-");
            up.set(1, 1);
            rejoined.countDown();

            awaitProgress(percent(55));
            flushAt = System.nanoTime();
            flushStatus = cluster.flushCache(1);
            flushed.countDown();

            awaitProgress(percent(70));
            cutAt = System.nanoTime();
            cluster.proxy.cut();
            Thread.sleep(OUTAGE.toMillis()); // the outage's length, not a synchronisation
            cluster.proxy.restore();
            restoredAt = System.nanoTime();
            restored.countDown();
        } catch (Throwable e) {
            chaosFailed = e;
            violations.add("the chaos itself failed: " + e);
        } finally {
            cluster.proxy.restore();
            up.set(1, 1);
            rejoined.countDown();
            flushed.countDown();
            restored.countDown();
            workers.shutdown();
            if (!workers.awaitTermination(Math.max(1, chaosDeadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                violations.add("the clients did not finish within " + CHAOS_DEADLINE.toMinutes() + " minutes");
                workers.shutdownNow();
            }
        }
        for (Future<?> f : running) {
            if (f.isDone()) {
                f.get();
            }
        }
        long chaosNanos = System.nanoTime() - started;

        long sweepStart = System.nanoTime();
        sweep();
        long sweepNanos = System.nanoTime() - sweepStart;
        duplicates.shutdownNow();

        Map<String, Integer> rows = rows("chaos-" + run + "-");
        check(rows);
        System.out.println(summary(rows, chaosNanos, sweepNanos, flushStatus, killedExit));
        if (chaosFailed != null) {
            throw new AssertionError("the chaos failed (node logs in " + ExampleCluster.LOGS + ")", chaosFailed);
        }

        assertThat(killedExit).as("node 2 died of SIGKILL").isEqualTo(137);
        assertThat(flushStatus).as("POST /api/ops/cache/flush").isEqualTo(204);
        assertThat(count(a -> a.status == CONNECTION_ERROR && !a.sweep)).as("connection errors (the kill reached the clients)").isPositive();
        assertThat(count(a -> a.status == 503)).as("503s (the outage reached the clients)").isPositive();
        if (!violations.isEmpty()) {
            throw new AssertionError(violations.size() + " violations (node logs in " + ExampleCluster.LOGS + "), the first:\n  "
                    + String.join("\n  ", violations.stream().limit(20).toList()));
        }
    }

    // ------------------------------------------------------------------- the burst right after the restart

    /** Concurrent clients of the burst: three times the restarted node's pool. */
    static final int BURST_CLIENTS = 3 * ExampleCluster.POOL_SIZE;
    /** How long a burst key may take, retries included. */
    static final Duration BURST_BUDGET = Duration.ofSeconds(90);
    final List<Key> burstKeys = Collections.synchronizedList(new ArrayList<>());
    volatile long burstSlowestNanos;

    /**
     * "Always answers" on a node that has just restarted: {@link #BURST_CLIENTS} concurrent slow first requests to node 2
     * alone, more than its pool of {@link ExampleCluster#POOL_SIZE} connections (each holds one from its claim to its
     * commit), while the other clients go on with node 1. A client retries a 409, a 503, a timeout or a connection error
     * on node 2 with the same key; every key must end 2xx within {@link #BURST_BUDGET}, with one payment row.
     */
    void burstAfterRestart(String prefix) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(BURST_CLIENTS, daemon("chaos-burst"));
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            long started = System.nanoTime();
            for (int i = 0; i < BURST_CLIENTS; i++) {
                Key k = new Key(-1, prefix + i, Kind.SLOW, Retry.NONE, body(prefix + i, 900 + i, 400, false), null);
                burstKeys.add(k);
                done.add(clients.submit(() -> {
                    start.await();
                    long deadline = System.nanoTime() + BURST_BUDGET.toNanos();
                    while (true) {
                        Answer a = send(k, 'A', 2, false);
                        if (a.success()) {
                            burstSlowestNanos = Math.max(burstSlowestNanos, System.nanoTime() - started);
                            return null;
                        }
                        if (System.nanoTime() > deadline) {
                            violations.add("burst after the restart: " + k + " got no 2xx within " + BURST_BUDGET.toSeconds()
                                    + " s; the last: " + a.text());
                            return null;
                        }
                        pause(100, 300);
                    }
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(BURST_BUDGET.toSeconds() + 60, TimeUnit.SECONDS);
            }
        } finally {
            clients.shutdownNow();
        }
        Map<String, Integer> rows = rows(prefix);
        for (Key k : burstKeys) {
            int n = rows.getOrDefault(k.id, 0);
            if (n != 1) {
                violations.add("burst after the restart: " + k + ": " + n + " payment rows");
            }
        }
    }

    // ------------------------------------------------------------------------------------------- the plan

    void plan(String prefix) {
        Random r = new Random(SEED);
        keys = new Key[KEYS];
        for (int i = 0; i < KEYS; i++) {
            int p = r.nextInt(100);
            Kind kind = p < 5 ? Kind.FAIL : p < 8 ? Kind.REUSE_AFTER : p < 10 ? Kind.REUSE_DURING : p < 15 ? Kind.SLOW
                    : p < 23 ? Kind.BURST : Kind.PLAIN;
            int q = r.nextInt(6);
            Retry retry = q == 0 ? Retry.OTHER_NODE_NOW : q == 1 ? Retry.LATER : Retry.NONE;
            String id = prefix + i;
            long amount = 100 + i;
            long delay = switch (kind) {
                case SLOW -> 200 + r.nextInt(1301);
                case REUSE_DURING -> 400 + r.nextInt(601);
                case BURST -> r.nextBoolean() ? 100 + r.nextInt(401) : 0;
                default -> 0;
            };
            keys[i] = new Key(i, id, kind, retry, body(id, amount, delay, kind == Kind.FAIL),
                    kind == Kind.REUSE_AFTER || kind == Kind.REUSE_DURING ? body(id, amount + 1, 0, false) : null);
        }
    }

    static String body(String reference, long amount, long delayMillis, boolean fail) {
        return "{\"amount\":" + amount + ",\"currency\":\"EUR\",\"reference\":\"" + reference + "\""
                + (delayMillis > 0 ? ",\"delayMillis\":" + delayMillis : "") + (fail ? ",\"fail\":true" : "") + "}";
    }

    int percent(int p) {
        return KEYS * p / 100;
    }

    // --------------------------------------------------------------------------------------- the clients

    /** One client thread: takes keys until none is left, runs the retries it deferred when they are due. */
    void work(Random random) {
        List<int[]> deferred = new ArrayList<>(); // {key index, due at completed}
        try {
            while (true) {
                runDue(deferred, false);
                int i = dispense();
                if (i < 0) {
                    break;
                }
                Key k = keys[i];
                runKey(k);
                if (k.retry == Retry.LATER) {
                    deferred.add(new int[] {i, completed.get() + 20 + random.nextInt(400)});
                }
                completed.incrementAndGet();
                synchronized (progress) {
                    progress.notifyAll();
                }
            }
            runDue(deferred, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable e) {
            violations.add("a client thread failed: " + e);
            e.printStackTrace();
        }
    }

    void runDue(List<int[]> deferred, boolean all) throws Exception {
        for (var it = deferred.iterator(); it.hasNext(); ) {
            int[] d = it.next();
            if (all || completed.get() >= d[1]) {
                it.remove();
                Key k = keys[d[0]];
                untilDefinitive(k, winner(k), k.index % 2 == 0 ? 2 : 1);
            }
        }
    }

    /** The body that won the key: B when only B got a 2xx (a reuse while the first ran), else A. */
    static char winner(Key k) {
        for (Answer a : k.answers()) {
            if (a.success()) {
                return a.body;
            }
        }
        return 'A';
    }

    /** The next key's index, or -1; waits at the gates for the chaos to be done. */
    int dispense() throws InterruptedException {
        int i = next.getAndIncrement();
        if (i >= KEYS) {
            return -1;
        }
        await(i >= percent(45) ? rejoined : null, "node 2 back in the cluster");
        await(i >= percent(60) ? flushed : null, "the cache flushed");
        await(i >= percent(85) ? restored : null, "the store restored");
        return i;
    }

    void await(CountDownLatch gate, String what) throws InterruptedException {
        if (gate != null && !gate.await(Math.max(1, chaosDeadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            violations.add("a client waited in vain for " + what);
        }
    }

    void awaitProgress(int n) throws InterruptedException {
        synchronized (progress) {
            while (completed.get() < n) {
                long left = chaosDeadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("the clients did not get to " + n + " keys in time (" + completed.get() + ")");
                }
                progress.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    void runKey(Key k) throws Exception {
        int first = k.index % 2 + 1;
        int other = 3 - first;
        switch (k.kind) {
            case PLAIN, SLOW, FAIL -> {
                untilDefinitive(k, 'A', first);
                if (k.retry == Retry.OTHER_NODE_NOW) {
                    untilDefinitive(k, 'A', other);
                }
            }
            case BURST -> {
                List<Future<Answer>> burst = new ArrayList<>();
                for (int d = 0; d < BURST; d++) {
                    int node = d % 2 == 0 ? first : other;
                    burst.add(duplicates.submit(() -> untilDefinitive(k, 'A', node)));
                }
                for (Future<Answer> f : burst) {
                    f.get();
                }
            }
            case REUSE_AFTER -> {
                Answer a = untilDefinitive(k, 'A', first);
                if (a.success()) {
                    untilDefinitive(k, 'B', other);
                }
            }
            case REUSE_DURING -> {
                Future<Answer> a = duplicates.submit(() -> untilDefinitive(k, 'A', first));
                Future<Answer> b = duplicates.submit(() -> untilDefinitive(k, 'B', other));
                a.get();
                b.get();
            }
        }
    }

    /**
     * Sends one body of a key until it gets a definitive answer: a 2xx, a 422, or the failing keys' 500. A
     * connection error, a 409 and a 503 are tried again on the other node after a short pause (the 503
     * during the outage after the store is back); anything else is a violation.
     */
    Answer untilDefinitive(Key k, char which, int node) throws Exception {
        long deadline = System.nanoTime() + KEY_DEADLINE.toNanos();
        int target = node;
        while (true) {
            if (up.get(target - 1) == 0) {
                target = 3 - target;
            }
            Answer a = send(k, which, target, false);
            if (a.success() || a.status == 422 || (a.status == 500 && k.kind == Kind.FAIL)) {
                return a;
            }
            switch (a.status) {
                case 409, CONNECTION_ERROR -> pause(100, 300);
                // a key that does not fail: a violation (check() reports it); tried again, so that the key's
                // other checks (one row, identical 2xx) still judge the rest of its life
                case 500 -> pause(200, 400);
                case 503 -> {
                    if (cutAt != 0 && restoredAt == 0) {
                        restored.await(Math.max(1, chaosDeadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    } else {
                        pause(200, 400);
                    }
                }
                default -> {
                    violations.add(k + " body " + which + ": unexpected " + a.text());
                    if (a.status != TIMEOUT) {
                        return a;
                    }
                    pause(200, 400);
                }
            }
            if (System.nanoTime() > deadline) {
                violations.add(k + " body " + which + ": lost, no definitive answer within " + KEY_DEADLINE.toSeconds()
                        + " s; the last: " + a.text());
                return a;
            }
            target = 3 - target;
        }
    }

    Answer send(Key k, char which, int node, boolean sweep) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(cluster.uri(node, "api/payments"))
                .header("Content-Type", "application/json").header("Idempotency-Key", k.id)
                .POST(HttpRequest.BodyPublishers.ofString(k.body(which))).timeout(REQUEST_TIMEOUT).build();
        Answer a;
        try {
            HttpResponse<byte[]> r = cluster.http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            a = new Answer(which, node, r.statusCode(), r.headers().firstValue("Idempotent-Replayed").isPresent(), r.body(),
                    r.headers().firstValue("Location").orElse(null), r.headers().firstValue("Retry-After").orElse(null),
                    System.nanoTime(), null, sweep);
        } catch (HttpTimeoutException e) {
            a = new Answer(which, node, TIMEOUT, false, null, null, null, System.nanoTime(), e.toString(), sweep);
        } catch (IOException e) {
            a = new Answer(which, node, CONNECTION_ERROR, false, null, null, null, System.nanoTime(), e.toString(), sweep);
        }
        k.answers.add(a);
        return a;
    }

    /** A client's back-off before it tries again (not a synchronisation: the next answer decides). */
    static void pause(int fromMillis, int toMillis) throws InterruptedException {
        Thread.sleep(ThreadLocalRandom.current().nextInt(fromMillis, toMillis + 1));
    }

    // ---------------------------------------------------------------------------------------- afterwards

    /** Every key once more, the chaos over: each 2xx key replays its payment; each reuse's loser gets 422. */
    void sweep() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS, daemon("chaos-sweep"));
        try {
            List<Future<?>> done = new ArrayList<>();
            for (Key k : keys) {
                done.add(pool.submit(() -> {
                    char w = winner(k);
                    int node = k.index % 2 == 0 ? 2 : 1;
                    if (k.answers().stream().anyMatch(Answer::success)) {
                        Answer a = send(k, w, node, true);
                        if (!a.success() || !a.replayed) {
                            violations.add(k + ": after the chaos the winner's retry got " + a.text());
                        }
                    }
                    if (k.bodyB != null) {
                        Answer b = send(k, w == 'A' ? 'B' : 'A', 3 - node, true);
                        if (b.status != 422) {
                            violations.add(k + ": after the chaos the loser's retry got " + b.text());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Payment rows per reference (= key) of this run, counted in PostgreSQL. */
    Map<String, Integer> rows(String prefix) throws Exception {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection c = cluster.database();
             PreparedStatement s = c.prepareStatement(
                     "select reference, count(*) from example_payment where reference like ? group by reference")) {
            s.setString(1, prefix + "%");
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    rows.put(r.getString(1), r.getInt(2));
                }
            }
        }
        return rows;
    }

    void check(Map<String, Integer> rows) {
        long outageEnd = restoredAt + OUTAGE_GRACE.toNanos();
        int rowsOfKeys = 0;
        for (Key k : keys) {
            List<Answer> answers = k.answers();
            List<Answer> ok = answers.stream().filter(Answer::success).toList();
            int n = rows.getOrDefault(k.id, 0);
            rowsOfKeys += n;
            if (!ok.isEmpty()) {
                if (n != 1) {
                    violations.add(k + ": " + n + " payment rows, answered 2xx " + ok.size() + " times");
                }
                Answer first = ok.get(0);
                for (Answer a : ok) {
                    if (a.status != first.status || !Arrays.equals(a.bytes, first.bytes)
                            || !java.util.Objects.equals(a.location, first.location) || a.body != first.body) {
                        violations.add(k + ": two different 2xx: " + first.text() + " / " + a.text());
                        break;
                    }
                }
                long fresh = ok.stream().filter(a -> !a.replayed).count();
                if (fresh > 1) {
                    violations.add(k + ": " + fresh + " 2xx answers that are not replays");
                }
            } else if (n != 0) {
                violations.add(k + ": " + n + " payment rows, never answered 2xx");
            }
            switch (k.kind) {
                case FAIL -> {
                    if (!ok.isEmpty() || answers.stream().noneMatch(a -> a.status == 500)) {
                        violations.add(k + ": a failing key answered " + statuses(answers));
                    }
                }
                case REUSE_AFTER, REUSE_DURING -> {
                    if (ok.isEmpty()) {
                        violations.add(k + ": neither body was answered 2xx: " + statuses(answers));
                        break;
                    }
                    char loser = ok.get(0).body == 'A' ? 'B' : 'A';
                    List<Answer> lost = answers.stream().filter(a -> a.body == loser && !a.sweep).toList();
                    if (lost.isEmpty() || lost.get(lost.size() - 1).status != 422) {
                        violations.add(k + ": the reuse (body " + loser + ") did not end in 422: " + statuses(lost));
                    }
                    if (k.kind == Kind.REUSE_AFTER) {
                        // sent after the first was answered: nothing is in progress any more
                        lost.stream().filter(a -> a.status == 409).findFirst().ifPresent(a ->
                                violations.add(k + ": 409 for the reuse after the first was answered: " + a.text()));
                    }
                }
                default -> {
                    if (ok.isEmpty()) {
                        violations.add(k + ": lost, never answered 2xx: " + statuses(answers));
                    }
                }
            }
            for (Answer a : answers) {
                if (a.status >= 500 && a.status != 500 && a.status != 503) {
                    violations.add(k + ": " + a.status + ": " + a.text());
                } else if (a.status == 500 && k.kind != Kind.FAIL) {
                    violations.add(k + ": 500 for a key that does not fail: " + a.text());
                } else if (a.status == 503 && (cutAt == 0 || a.at < cutAt || a.at > outageEnd)) {
                    violations.add(k + ": 503 outside the outage (" + millis(cutAt) + " to " + millis(restoredAt)
                            + " ms, + " + OUTAGE_GRACE.toMillis() + " ms): " + a.text());
                } else if (a.status == 503 && outage(a) == null) {
                    violations.add(k + ": a 503 that is neither the store's nor the database's: " + a.text());
                } else if (a.status == CONNECTION_ERROR && (a.node != 2 || killAt == 0 || a.at < killAt || node2BackAt != 0 && a.at > node2BackAt)) {
                    violations.add(k + ": a connection error outside node 2's death: " + a.text());
                }
            }
        }
        int allRows = rows.values().stream().mapToInt(Integer::intValue).sum();
        if (allRows != rowsOfKeys) {
            violations.add((allRows - rowsOfKeys) + " payment rows of this run belong to no key");
        }
    }

    /**
     * Whose 503 this is: {@code "store"} (the library's, {@value #STORE_UNAVAILABLE}), {@code "database"} (the
     * example's, {@value #DATABASE_UNAVAILABLE}, with {@code Retry-After: 1}), or null for any other answer.
     */
    static String outage(Answer a) {
        if (a.status != 503) {
            return null;
        }
        String body = a.bodyText();
        if (body.contains("\"type\":\"" + STORE_UNAVAILABLE + "\"")) {
            return "store";
        }
        return body.contains("\"type\":\"" + DATABASE_UNAVAILABLE + "\"") && "1".equals(a.retryAfter) ? "database" : null;
    }

    /** A body for a message: the innermost cause of a server's HTML error page, or the first 300 characters. */
    static String brief(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        java.util.regex.Matcher pre = java.util.regex.Pattern.compile("<pre>(.*?)</pre>", java.util.regex.Pattern.DOTALL).matcher(text);
        String cause = null;
        while (pre.find()) {
            cause = pre.group(1);
        }
        if (cause != null) {
            text = "(error page) root cause " + cause;
        }
        text = text.replaceAll("\\s+", " ");
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }

    static String statuses(List<Answer> answers) {
        return answers.stream().map(a -> a.body + ":" + a.status + (a.replayed ? "r" : "") + "@" + a.node).toList().toString();
    }

    long count(Predicate<Answer> p) {
        return Arrays.stream(keys).flatMap(k -> k.answers().stream()).filter(p).count();
    }

    String summary(Map<String, Integer> rows, long chaosNanos, long sweepNanos, int flushStatus, int killedExit) {
        Map<Kind, Integer> kinds = new EnumMap<>(Kind.class);
        Map<Retry, Integer> retries = new EnumMap<>(Retry.class);
        for (Key k : keys) {
            kinds.merge(k.kind, 1, Integer::sum);
            retries.merge(k.retry, 1, Integer::sum);
        }
        long keys2xx = Arrays.stream(keys).filter(k -> k.answers().stream().anyMatch(Answer::success)).count();
        long first503 = Arrays.stream(keys).flatMap(k -> k.answers().stream()).filter(a -> a.status == 503)
                .mapToLong(Answer::at).min().orElse(0);
        long last503 = Arrays.stream(keys).flatMap(k -> k.answers().stream()).filter(a -> a.status == 503)
                .mapToLong(Answer::at).max().orElse(0);
        Predicate<Answer> chaos = a -> !a.sweep;
        StringBuilder s = new StringBuilder();
        s.append("\n==== ChaosIT: counts (seed ").append(SEED).append(", ").append(THREADS).append(" client threads) ====\n");
        List<Answer> burst = burstKeys.stream().flatMap(k -> k.answers().stream()).toList();
        s.append(String.format("burst after restart %d clients on node 2 (pool of %d connections): %d keys 2xx, %d requests"
                        + " (%d 409, %d 503, %d connection errors or timeouts), the slowest key after %.1f s%n",
                BURST_CLIENTS, ExampleCluster.POOL_SIZE, burstKeys.stream().filter(k -> k.answers().stream().anyMatch(Answer::success)).count(),
                burst.size(), burst.stream().filter(a -> a.status == 409).count(), burst.stream().filter(a -> a.status == 503).count(),
                burst.stream().filter(a -> a.status < 0).count(), burstSlowestNanos / 1e9));
        s.append(String.format("keys              %6d  %s, retried %s%n", KEYS, kinds, retries));
        s.append(String.format("requests          %6d  (+ %d after the chaos)%n", count(chaos), count(a -> a.sweep)));
        s.append(String.format("2xx first         %6d%n", count(chaos.and(a -> a.success() && !a.replayed))));
        s.append(String.format("2xx replays       %6d%n", count(chaos.and(a -> a.success() && a.replayed))));
        s.append(String.format("409               %6d%n", count(chaos.and(a -> a.status == 409))));
        s.append(String.format("422               %6d%n", count(chaos.and(a -> a.status == 422))));
        long failing500 = Arrays.stream(keys).filter(k -> k.kind == Kind.FAIL)
                .flatMap(k -> k.answers().stream()).filter(a -> a.status == 500).count();
        s.append(String.format("500 (fail keys)   %6d%n", failing500));
        s.append(String.format("500 (other)       %6d%n", count(a -> a.status == 500) - failing500));
        s.append(String.format("503               %6d  (from %d to %d ms; the store was cut from %d to %d ms)%n",
                count(a -> a.status == 503), millis(first503), millis(last503), millis(cutAt), millis(restoredAt)));
        s.append(String.format("  store           %6d  (the library's store-unavailable: claim, replay or completion)%n",
                count(a -> "store".equals(outage(a)))));
        s.append(String.format("  database        %6d  (the example's database-unavailable: claimed before the cut, its payment INSERT lost the database)%n",
                count(a -> "database".equals(outage(a)))));
        s.append(String.format("other 5xx         %6d%n", count(a -> a.status > 500 && a.status != 503)
                + count(a -> a.status == 503 && outage(a) == null)));
        s.append(String.format("connection errors %6d%n", count(a -> a.status == CONNECTION_ERROR)));
        s.append(String.format("timeouts          %6d%n", count(a -> a.status == TIMEOUT)));
        s.append(String.format("after the chaos   %6d replays, %d 422%n", count(a -> a.sweep && a.success()),
                count(a -> a.sweep && a.status == 422)));
        s.append(String.format("keys with 2xx     %6d%n", keys2xx));
        s.append(String.format("payment rows      %6d  (keys with more than one: %d)%n",
                rows.values().stream().mapToInt(Integer::intValue).sum(), rows.values().stream().filter(n -> n > 1).count()));
        s.append(String.format("timeline          kill node 2 at %d ms (exit %d), back in the cluster at %d ms; cache flushed at %d ms (%d); "
                        + "store cut %d to %d ms (proxy: %d connections, %d refused)%n",
                millis(killAt), killedExit, millis(node2BackAt), millis(flushAt), flushStatus, millis(cutAt), millis(restoredAt),
                cluster.proxy.accepted(), cluster.proxy.refused()));
        s.append(String.format("JGroups stack     the library's TCP stack (no %s in the node logs): node 1 on %s, node 2 on %s%n",
                ExampleCluster.DEFAULT_STACK, cluster.node(1).physicalAddresses(), cluster.node(2).physicalAddresses()));
        s.append(String.format("took              %d s chaos, %d s after%n", TimeUnit.NANOSECONDS.toSeconds(chaosNanos),
                TimeUnit.NANOSECONDS.toSeconds(sweepNanos)));
        s.append(String.format("violations        %6d%n", violations.size()));
        violations.stream().limit(40).forEach(v -> s.append("  ").append(v).append('\n'));
        s.append("====");
        return s.toString();
    }

    static long millis(long nanos) {
        return nanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(nanos - t0);
    }

    static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
