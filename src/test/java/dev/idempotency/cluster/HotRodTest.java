package dev.idempotency.cluster;

import dev.idempotency.cluster.ClusterProcesses.Node;
import dev.idempotency.testing.InfinispanServers;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cache on an Infinispan Server cluster, {@code idempotency.cache.mode=remote}: two Infinispan Server nodes
 * (started from Maven Central's server runtime, each in a JVM of its own) and four application nodes (JVMs of their
 * own: the JPA store on the local PostgreSQL, Narayana, the library's Hot Rod cache, created distributed with two
 * owners). The store judges "new"; the servers answer finished keys and carry the wake-ups. Servers are killed with
 * SIGKILL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HotRodTest {

    static final long LEASE_MILLIS = 3000;

    final InfinispanServers servers = new InfinispanServers(2);
    final ClusterProcesses processes = new ClusterProcesses();
    final List<Node> nodes = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        InfinispanServers.assumeAvailable();
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS cluster_effect");
            s.execute("CREATE TABLE cluster_effect (idem_key VARCHAR(100) NOT NULL, node VARCHAR(100) NOT NULL)");
        }
        servers.start();
        for (int i = 1; i <= 4; i++) {
            nodes.add(processes.start("app-" + i, 0, "unused", LEASE_MILLIS,
                    List.of("-Didempotency.test.cache=remote:" + servers.serverList())));
        }
    }

    @AfterAll
    void stop() throws Exception {
        processes.close();
        servers.close();
    }

    String get(Node n, String path) throws Exception {
        return processes.get(n, path);
    }

    long statements(Node n) throws Exception {
        return Long.parseLong(get(n, "statements"));
    }

    static long effects(String key) {
        return TestDatabase.POSTGRES.count("select count(*) from cluster_effect where idem_key = '" + key + "'");
    }

    /** {@code perKey} duplicates of each key, spread over the four nodes, all at once; returns the answers. */
    List<CompletableFuture<String>> race(List<String> keys, int perKey) {
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (String key : keys) {
                answers.add(processes.getAsync(nodes.get((i + key.hashCode()) & 3), "run?key=" + key));
            }
        }
        return answers;
    }

    static void assertOnceEach(List<String> keys, List<CompletableFuture<String>> answers) throws Exception {
        int executed = 0;
        for (CompletableFuture<String> a : answers) {
            String answer = a.get(120, TimeUnit.SECONDS);
            assertThat(answer).isIn("executed", "replayed", "conflict");
            executed += answer.equals("executed") ? 1 : 0;
        }
        assertThat(executed).as("executions").isEqualTo(keys.size());
        for (String key : keys) {
            assertThat(effects(key)).as("business rows of " + key).isEqualTo(1);
        }
    }

    @Test
    @Order(1)
    void fourNodesRunRacingDuplicatesOnceAnswerFinishedKeysWithoutSqlAndWakeWaitersOnOtherNodes() throws Exception {
        // 96 racing duplicates spread over four nodes: one execution.
        String raced = "raced-" + UUID.randomUUID();
        assertOnceEach(List.of(raced), race(List.of(raced), 96));

        // A duplicate of the finished key: answered by the servers on every node, no SQL.
        processes.assertReplayedWithoutSql(nodes, raced);

        // Waiters on nodes 2, 3 and 4 are woken by the completion on node 1 (the servers' events), not by polling.
        String awaited = "awaited-" + UUID.randomUUID();
        processes.assertWokenByTheCompletion(nodes.get(0), nodes.subList(1, 4), awaited, LEASE_MILLIS / 2,
                () -> ClusterTest.awaitClaimed(awaited));
        for (Node n : nodes) {
            assertThat(get(n, "relistened")).as(n.name() + "'s listener never fell silent: the events woke its waiters").isEqualTo("0");
        }
        assertThat(effects(awaited)).isEqualTo(1);
    }

    @Test
    @Order(2)
    void aServerKilledMidRunLosesNothing() throws Exception {
        List<String> before = keys("before-kill", 8);
        assertOnceEach(before, race(before, 4));

        // Racing duplicates of 16 new keys; a server is killed while they run.
        List<String> during = keys("during-kill", 16);
        List<CompletableFuture<String>> answers = race(during, 6);
        answers.get(answers.size() / 3).get(60, TimeUnit.SECONDS);
        servers.kill(1);
        assertOnceEach(during, answers);

        // Writes to the survivor wait until its cluster has seen the death (its failure detection); a node whose
        // operation timed out meanwhile bypassed the cache (the store answered) and uses it again after its retry
        // interval. Then keys finished before the kill are answered by the surviving server (two owners), no SQL.
        for (Node n : nodes) {
            awaitReachable(n, before.get(0));
        }
        for (Node n : nodes) {
            long sql = statements(n);
            for (String key : before) {
                assertThat(get(n, "run?key=" + key)).isEqualTo("replayed");
            }
            assertThat(statements(n)).as(n.name() + " answered keys finished before the kill without SQL").isEqualTo(sql);
        }
        for (String key : during) {
            for (Node n : nodes) {
                assertThat(get(n, "run?key=" + key)).isEqualTo("replayed");
            }
            assertThat(effects(key)).isEqualTo(1);
        }

        // A waiter is still answered across nodes, within the 45 s wait poll and far within the two-minute lease:
        // woken by the listener the client moved to the surviving server (or the one the library registers again when
        // it finds it silent), or, where the completion's write to the servers failed, by its own look at the store.
        String awaited = "awaited-after-kill-" + UUID.randomUUID();
        processes.assertAnswered(nodes.get(1), List.of(nodes.get(0), nodes.get(2), nodes.get(3)), awaited,
                LEASE_MILLIS / 2, 60, () -> ClusterTest.awaitClaimed(awaited));
        servers.start(1);
    }

    /** Until the node uses the cache again (up to a minute): each request after its retry interval tries it. */
    void awaitReachable(Node n, String finishedKey) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!get(n, "reachable").equals("true")) {
            assertThat(System.nanoTime()).as(n.name() + " uses the cache again").isLessThan(deadline);
            assertThat(get(n, "run?key=" + finishedKey)).isEqualTo("replayed");
            Thread.sleep(200);
        }
    }

    @Test
    @Order(3)
    void withEveryServerDownTheStoreAnswersExactlyOnceAndTheCacheIsUsedAgainWhenTheyReturn() throws Exception {
        String finished = "finished-" + UUID.randomUUID();
        assertThat(get(nodes.get(0), "run?key=" + finished)).isEqualTo("executed");
        servers.kill(0);
        servers.kill(1);

        // Racing duplicates with no cache: still one execution each; the store answers the duplicates.
        List<String> keys = keys("no-cache", 8);
        assertOnceEach(keys, race(keys, 6));
        for (Node n : nodes) {
            assertThat(get(n, "run?key=" + finished)).isEqualTo("replayed");
            assertThat(get(n, "reachable")).as(n.name() + " bypasses the cache").isEqualTo("false");
        }

        // A waiter is not woken by the servers now: it polls the store (every lock timeout) and gets the answer.
        String awaited = "awaited-down-" + UUID.randomUUID();
        CompletableFuture<String> holder = processes.getAsync(nodes.get(0), "run?hold=true&lease=120000&key=" + awaited);
        ClusterTest.awaitClaimed(awaited);
        CompletableFuture<String> waiter = processes.getAsync(nodes.get(1), "run?wait=true&lease=120000&key=" + awaited);
        get(nodes.get(0), "release?key=" + awaited);
        assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("executed");
        assertThat(waiter.get(60, TimeUnit.SECONDS)).isEqualTo("replayed");

        // The servers come back (their cache's definition kept, its entries lost): each node uses the cache again
        // after its retry interval, and a finished key is then answered without SQL.
        servers.start(0);
        servers.start(1);
        for (Node n : nodes) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!get(n, "run?key=" + finished).equals("replayed") || !get(n, "reachable").equals("true")) {
                assertThat(System.nanoTime()).as(n.name() + " uses the cache again").isLessThan(deadline);
                Thread.sleep(200);
            }
            get(n, "run?key=" + finished); // cached again, by this node or another
            long sql = statements(n);
            assertThat(get(n, "run?key=" + finished)).isEqualTo("replayed");
            assertThat(statements(n)).as(n.name() + " answers from the cache again").isEqualTo(sql);
        }
        for (String key : keys) {
            assertThat(effects(key)).isEqualTo(1);
        }
        assertThat(effects(awaited)).isEqualTo(1);
    }

    static List<String> keys(String prefix, int n) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(prefix + "-" + i + "-" + UUID.randomUUID());
        }
        return keys;
    }
}
