package dev.idempotency.galera;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.core.Claimed;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.GaleraCluster;
import dev.idempotency.testing.JtaEnvironment;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JPA store on a three-node MariaDB Galera cluster (issue 21), in both claim modes. Three application nodes
 * (each its own engine, connection pool and persistence unit; one JTA transaction manager, as in one JVM) talk to
 * three different database nodes (woken by each other's completions, as the clustered cache wakes them): a row lock is local to one database node there, an uncommitted row is invisible
 * to the others, and the first of two conflicting commits wins (the loser's commit fails with 1213, its whole
 * transaction rolled back). Every test counts business rows, on every database node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GaleraStoreTest {

    static final Duration LEASE = Duration.ofMinutes(5);
    static final Policy WAIT = new Policy(Duration.ofHours(1), LEASE, true, Duration.ofSeconds(60), Duration.ofSeconds(1));
    static final Policy REJECT = new Policy(Duration.ofHours(1), LEASE, false, Duration.ZERO, Duration.ofSeconds(1));
    /** A leased claim whose node died mid-call is taken over after this lease (nothing renews it here). */
    static final Policy SHORT_LEASE = new Policy(Duration.ofHours(1), Duration.ofSeconds(3), true, Duration.ofSeconds(60), Duration.ofSeconds(1));

    GaleraCluster cluster;
    final List<JtaEnvironment> envs = new ArrayList<>();
    final List<IdempotencyEngine> nodes = new ArrayList<>();
    final AtomicInteger executions = new AtomicInteger();
    ExecutorService pool;

    @BeforeAll
    void startCluster() throws Exception {
        GaleraCluster.assumeAvailable();
        cluster = new GaleraCluster(Path.of("target", "galera").toAbsolutePath(), 3).start();
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void connect() throws SQLException {
        try (Connection c = connect(1); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS test_payment");
            s.execute("CREATE TABLE test_payment (id VARCHAR(100) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL)");
        }
        // One set of wake-ups for the three application nodes, as the clustered cache gives them (cache.mode=cluster)
        LocalCompletionSignals wakeUps = new LocalCompletionSignals();
        for (int node = 1; node <= cluster.size(); node++) {
            JtaEnvironment env = new JtaEnvironment(cluster.url(node), GaleraCluster.USER, GaleraCluster.PASSWORD, Map.of(), 20, false);
            envs.add(env);
            // With a UserTransaction: the HTTP door's way, a transaction begun on the request's thread and left open.
            var bridge = new dev.idempotency.jta.JtaTransactionBridge(env.tsr, new dev.idempotency.jta.TransactionManagerRequiresNew(env.tm),
                    com.arjuna.ats.jta.UserTransaction.userTransaction());
            nodes.add(new IdempotencyEngine(env.store, Clock.systemUTC(), "app-" + node, bridge, wakeUps,
                    Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE));
        }
        pool = Executors.newFixedThreadPool(48);
        executions.set(0);
    }

    @AfterEach
    void disconnect() throws Exception {
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
        envs.forEach(JtaEnvironment::close);
        envs.clear();
        nodes.clear();
    }

    Connection connect(int node) throws SQLException {
        return DriverManager.getConnection(cluster.url(node), GaleraCluster.USER, GaleraCluster.PASSWORD);
    }

    long count(int node, String sql) throws SQLException {
        try (Connection c = connect(node); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** One call of the payment on an application node, with the claim chosen; its charge counted. */
    String call(boolean atomic, int node, String key, Policy policy) throws Exception {
        JtaEnvironment env = envs.get(node - 1);
        return GaleraRacerNode.call(env, nodes.get(node - 1), atomic, key, policy, () -> {
            executions.incrementAndGet();
            return GaleraRacerNode.charge(env, key);
        });
    }

    String charge(int node, String key) throws Exception {
        executions.incrementAndGet();
        return GaleraRacerNode.charge(envs.get(node - 1), key);
    }

    void assertOneRowPerKeyOnEveryNode(List<String> keys) throws SQLException {
        for (int node = 1; node <= cluster.size(); node++) {
            assertThat(count(node, "select count(*) from test_payment")).as("business rows on database node %d", node).isEqualTo(keys.size());
            assertThat(count(node, "select count(distinct substring_index(id, '#', 1)) from test_payment"))
                    .as("keys charged on database node %d", node).isEqualTo(keys.size());
            assertThat(count(node, "select count(*) from idempotency_record where status = 'COMPLETED'"))
                    .as("completed records on database node %d", node).isEqualTo(keys.size());
        }
    }

    @ParameterizedTest(name = "atomic={0}")
    @ValueSource(booleans = {true, false})
    void thirtyTwoRacersPerKeyOverThreeDatabaseNodesChargeOnce(boolean atomic) throws Exception {
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 12; k++) {
            keys.add((atomic ? "a" : "l") + "-race-" + k);
        }
        Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();
        AtomicInteger inProgress = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (String key : keys) {
            CountDownLatch go = new CountDownLatch(1);
            for (int r = 0; r < 32; r++) {
                int node = r % 3 + 1;
                // Half wait for the first call's answer, half are told "in progress" (either is a right answer).
                Policy policy = r % 2 == 0 ? WAIT : REJECT;
                futures.add(pool.submit(() -> {
                    go.await();
                    try {
                        answers.computeIfAbsent(call(atomic, node, key, policy), a -> new AtomicInteger()).incrementAndGet();
                    } catch (IdempotencyInProgressException e) {
                        inProgress.incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
        }
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS); // no store error, no lost race reported as a failure
        }
        assertOneRowPerKeyOnEveryNode(keys);
        assertThat(answers.keySet()).as("every answer is a key's receipt").allMatch(a -> a.startsWith("receipt-"));
        assertThat(answers.values().stream().mapToInt(AtomicInteger::get).sum() + inProgress.get()).isEqualTo(keys.size() * 32);
        for (String key : keys) {
            assertThat(answers.get("receipt-" + key)).as("the waiting racers of %s all got its receipt", key).isNotNull()
                    .satisfies(n -> assertThat(n.get()).isGreaterThanOrEqualTo(16));
        }
    }

    /**
     * Three application JVMs, each on its own database node, race 12 racers on each of 8 keys at once (36 a key),
     * first with atomic claims, then with leased ones: one business row per key on every database node; every
     * racer gets the receipt or "in progress", none an error. (The JVMs share no wake-ups: every racer is REJECT.)
     */
    @Test
    void racersInThreeApplicationJvmsOnThreeDatabaseNodesChargeOnce() throws Exception {
        List<Process> jvms = new ArrayList<>();
        try {
            List<java.io.BufferedReader> outs = new ArrayList<>();
            for (int node = 1; node <= cluster.size(); node++) {
                Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                        "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-galera-" + node,
                        "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-galera-" + node,
                        "-cp", System.getProperty("java.class.path"), GaleraRacerNode.class.getName(),
                        cluster.url(node), GaleraCluster.USER, GaleraCluster.PASSWORD, "jvm-" + node)
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                jvms.add(p);
                outs.add(new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
            }
            for (java.io.BufferedReader out : outs) {
                assertThat(readUntil(out, GaleraRacerNode.READY)).as("an application JVM started").isNotNull();
            }
            for (String mode : List.of("atomic", "leased")) {
                List<String> keys = new ArrayList<>();
                for (int k = 0; k < 8; k++) {
                    keys.add("jvm-" + mode + "-" + k);
                }
                for (Process p : jvms) {
                    p.getOutputStream().write(("GO " + mode + " " + String.join(",", keys) + " 12\n").getBytes(StandardCharsets.UTF_8));
                    p.getOutputStream().flush();
                }
                int receipts = 0;
                int inProgress = 0;
                for (java.io.BufferedReader out : outs) {
                    String[] result = readUntil(out, "RESULT ").split(" ");
                    receipts += Integer.parseInt(result[1]);
                    inProgress += Integer.parseInt(result[2]);
                    assertThat(Integer.parseInt(result[3])).as("%s: racers that got an error", mode).isZero();
                }
                assertThat(receipts + inProgress).isEqualTo(keys.size() * 36);
                assertThat(receipts).as("%s: at least the winners got their receipts", mode).isGreaterThanOrEqualTo(keys.size());
                for (int node = 1; node <= cluster.size(); node++) {
                    for (String key : keys) {
                        assertThat(count(node, "select count(*) from test_payment where id like '" + key + "#%'"))
                                .as("%s: rows of %s on database node %d", mode, key, node).isOne();
                    }
                }
            }
        } finally {
            jvms.forEach(Process::destroyForcibly);
        }
    }

    /** The first line that starts with the prefix (lines before it are the JVM's own output); null at its end. */
    static String readUntil(java.io.BufferedReader out, String prefix) throws java.io.IOException {
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return null;
    }

    /**
     * Two nodes claim one key atomically, each in its own open transaction on its own database node (neither sees the
     * other's uncommitted row), and both write their business row: the first to commit wins; the second's commit
     * fails certification, its business row rolls back with it, and it is told "in progress" (the HTTP door's 409),
     * not a store error. A third node then replays the winner.
     */
    @Test
    void theSecondOfTwoNodesToCommitAKeyLosesItsWorkAndIsToldInProgress() throws Exception {
        ScopedKey key = new ScopedKey("payments", "anonymous", "two-commits");
        CountDownLatch bothCharged = new CountDownLatch(2);
        CountDownLatch firstCommitted = new CountDownLatch(1);
        Future<Boolean> first = pool.submit(() -> {
            Claimed held = ((Decision.Held) nodes.get(0).flow(true).hold(key, "fp-two-commits", null, REJECT)).claimed();
            charge(1, "two-commits");
            bothCharged.countDown();
            bothCharged.await();
            try {
                return held.complete("receipt-1".getBytes(StandardCharsets.UTF_8));
            } finally {
                firstCommitted.countDown();
            }
        });
        Future<Throwable> second = pool.submit(() -> {
            Claimed held = ((Decision.Held) nodes.get(1).flow(true).hold(key, "fp-two-commits", null, REJECT)).claimed();
            charge(2, "two-commits");
            bothCharged.countDown();
            firstCommitted.await();
            try {
                held.complete("receipt-2".getBytes(StandardCharsets.UTF_8));
                return null;
            } catch (Exception e) {
                return e;
            }
        });
        assertThat(first.get(60, TimeUnit.SECONDS)).isTrue();
        assertThat(second.get(60, TimeUnit.SECONDS)).as("the loser of the certification").isInstanceOf(IdempotencyInProgressException.class);
        for (int node = 1; node <= cluster.size(); node++) {
            assertThat(count(node, "select count(*) from test_payment")).as("business rows on node %d", node).isOne();
        }
        assertThat(call(true, 3, "two-commits", REJECT)).isEqualTo("receipt-1");
    }

    @Test
    void aThousandDistinctKeysFromEightThreadsOverThreeNodes() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 1000; k++) {
            keys.add("distinct-" + k);
        }
        ExecutorService eight = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> futures = new ArrayList<>();
            for (int k = 0; k < keys.size(); k++) {
                String key = keys.get(k);
                int node = k % 3 + 1;
                futures.add(eight.submit(() -> call(true, node, key, REJECT)));
            }
            for (Future<String> f : futures) {
                assertThat(f.get(120, TimeUnit.SECONDS)).startsWith("receipt-distinct-");
            }
        } finally {
            eight.shutdownNow();
        }
        assertThat(executions).hasValue(1000);
        assertOneRowPerKeyOnEveryNode(keys);
    }

    /**
     * A database node killed (SIGKILL) while calls run on all three: calls on it fail and their clients retry on
     * another node (a load balancer's job); nothing is charged twice; the node rejoins and catches up.
     */
    @Test
    void aDatabaseNodeKilledMidRunLosesNothingAndChargesNothingTwice() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 300; k++) {
            keys.add("kill-" + k);
        }
        AtomicInteger done = new AtomicInteger();
        AtomicInteger failedOver = new AtomicInteger();
        AtomicInteger refusedByCertification = new AtomicInteger();
        CountDownLatch third = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            String key = keys.get(k);
            int first = k % 3 + 1;
            boolean atomic = k % 2 == 0;
            int other = k % 2 + 1;
            futures.add(pool.submit(() -> {
                int node = first;
                for (int attempt = 0; ; attempt++) {
                    try {
                        // Each key twice, on two nodes: the second is a duplicate that must replay.
                        assertThat(call(atomic, node, key, SHORT_LEASE)).isEqualTo("receipt-" + key);
                        assertThat(call(atomic, node == other ? other % 2 + 1 : other, key, SHORT_LEASE)).isEqualTo("receipt-" + key);
                        if (done.incrementAndGet() == keys.size() / 3) {
                            third.countDown();
                        }
                        return null;
                    } catch (Exception e) {
                        boolean onTheKilledNode = node == 3;
                        if (attempt >= 3 || !(onTheKilledNode || certificationFailure(e))) {
                            // only the killed node's calls may fail, and a commit that Galera's certification refused
                            // while the cluster changed its view (a deadlock error, SQLState 40001, rolled back whole)
                            throw e;
                        }
                        if (envs.get(0).tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
                            envs.get(0).tm.rollback();
                        }
                        if (onTheKilledNode) {
                            failedOver.incrementAndGet();
                            node = other; // the client retries on a node that is up
                        } else {
                            refusedByCertification.incrementAndGet(); // the client retries the same call
                        }
                    }
                }
            }));
        }
        assertThat(third.await(120, TimeUnit.SECONDS)).as("a third of the keys done").isTrue();
        cluster.kill(3);
        try {
            for (Future<?> f : futures) {
                f.get(180, TimeUnit.SECONDS);
            }
            for (int node = 1; node <= 2; node++) {
                assertThat(count(node, "select count(*) from test_payment")).as("business rows on node %d", node).isEqualTo(keys.size());
            }
        } finally {
            cluster.rejoin(3); // the next tests need all three nodes, whatever this one found
        }
        assertOneRowPerKeyOnEveryNode(keys);
        System.out.println("Galera kill test: " + failedOver.get() + " calls failed over to another node, "
                + refusedByCertification.get() + " commits refused by certification and retried");
    }

    /** Whether Galera's certification refused the call's commit: a deadlock error (SQLState 40001) in its causes. */
    static boolean certificationFailure(Throwable e) {
        java.util.Deque<Throwable> todo = new java.util.ArrayDeque<>(List.of(e));
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        while (!todo.isEmpty()) {
            Throwable t = todo.pop();
            if (!seen.add(t)) {
                continue;
            }
            if (t instanceof java.sql.SQLException sql && "40001".equals(sql.getSQLState())) {
                return true;
            }
            if (t.getCause() != null) {
                todo.push(t.getCause());
            }
            todo.addAll(List.of(t.getSuppressed()));
        }
        return false;
    }
}
