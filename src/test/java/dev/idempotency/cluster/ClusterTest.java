package dev.idempotency.cluster;

import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.idempotency.cluster.ClusterProcesses.Node;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The clustered cache, duplicates of a running call across nodes (woken by an answer stored on another node) and the
 * take-over of a crashed node's claim: nodes in separate JVMs sharing the local PostgreSQL, each with its own
 * Infinispan cache manager, in one JGroups TCP cluster on loopback.
 */
class ClusterTest {

    static final String HOSTS = "127.0.0.1[7911],127.0.0.1[7912],127.0.0.1[7913]";
    static final long LEASE_MILLIS = 3000;

    final ClusterProcesses processes = new ClusterProcesses();

    @BeforeEach
    void database() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS cluster_effect");
            s.execute("CREATE TABLE cluster_effect (idem_key VARCHAR(100) NOT NULL, node VARCHAR(100) NOT NULL)");
        }
    }

    @AfterEach
    void stopNodes() throws Exception {
        processes.close();
    }

    Node start(String name, int port) throws Exception {
        return processes.start(name, port, HOSTS, LEASE_MILLIS);
    }

    String get(Node n, String path) throws Exception {
        return processes.get(n, path);
    }

    CompletableFuture<String> getAsync(Node n, String path) {
        return processes.getAsync(n, path);
    }

    long statements(Node n) throws Exception {
        return Long.parseLong(get(n, "statements"));
    }

    void awaitMembers(int count) throws Exception {
        processes.awaitMembers(count, processes.nodes);
    }

    static long effects(String key) {
        return TestDatabase.POSTGRES.count("select count(*) from cluster_effect where idem_key = '" + key + "'");
    }

    @Test
    void twoNodesOneExecutionNoSqlForDuplicatesWakeUpsTakeOverAndALateJoiner() throws Exception {
        Node one = start("node-1", 7911);
        Node two = start("node-2", 7912);
        awaitMembers(2);

        // 64 racing duplicates spread over both nodes: one execution.
        String raced = "raced-" + UUID.randomUUID();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            answers.add(getAsync(i % 2 == 0 ? one : two, "run?key=" + raced));
        }
        int executed = 0;
        for (CompletableFuture<String> a : answers) {
            String answer = a.get(120, TimeUnit.SECONDS);
            assertThat(answer).isIn("executed", "replayed", "conflict");
            if (answer.equals("executed")) {
                executed++;
            }
        }
        assertThat(executed).isEqualTo(1);
        assertThat(effects(raced)).isEqualTo(1);

        // A duplicate of the finished key: no SQL, on either node.
        for (Node n : List.of(one, two)) {
            long before = statements(n);
            assertThat(get(n, "run?key=" + raced)).isEqualTo("replayed");
            assertThat(statements(n)).as(n.name() + " ran no SQL").isEqualTo(before);
        }

        // A waiter on node 2 is woken by the completion on node 1, without polling the database: the lease is
        // two minutes, so only the wake-up can release it within the 30 s the test waits.
        String awaited = "awaited-" + UUID.randomUUID();
        CompletableFuture<String> holder = getAsync(one, "run?hold=true&lease=120000&key=" + awaited);
        awaitClaimed(awaited);
        long before = statements(two);
        CompletableFuture<String> waiter = getAsync(two, "run?wait=true&lease=120000&key=" + awaited);
        Thread.sleep(LEASE_MILLIS / 2); // an observation window (not synchronisation): a poller would query meanwhile
        assertThat(waiter).isNotDone();
        get(one, "release?key=" + awaited);
        assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("executed");
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isEqualTo("replayed");
        assertThat(statements(two) - before).as("node 2's statements while waiting: its claim only").isLessThanOrEqualTo(2);

        // Node 1 dies mid-operation: node 2 takes over after the lease; the operation completes once.
        String crashed = "crashed-" + UUID.randomUUID();
        getAsync(one, "run?hold=true&key=" + crashed);
        awaitClaimed(crashed);
        one.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        assertThat(get(two, "run?key=" + crashed)).as("within the lease").isEqualTo("conflict");
        String taken = get(two, "run?wait=true&key=" + crashed);
        assertThat(taken).isEqualTo("took-over");
        assertThat(effects(crashed)).as("the dead node's write never committed; node 2's did").isEqualTo(1);
        assertThat(TestDatabase.POSTGRES.count("select count(*) from cluster_effect where idem_key = '" + crashed
                + "' and node = 'node-2'")).isEqualTo(1);

        // A node that joins later answers duplicates of keys finished before it joined, never as new.
        Node three = start("node-3", 7913);
        awaitMembers(2);
        assertThat(get(three, "run?key=" + raced)).isEqualTo("replayed");
        assertThat(get(three, "run?key=" + awaited)).isEqualTo("replayed");
        assertThat(effects(raced)).isEqualTo(1);
        assertThat(effects(awaited)).isEqualTo(1);
    }

    /**
     * Optimistic claims on two nodes of a replicated cache: the cache's marker holds the other node's duplicates off
     * before they run, so the work begins once in all (not once per node), and every duplicate gets its answer.
     */
    @Test
    void optimisticDuplicatesOnTwoNodesAreHeldOffByTheSharedMarkerAndRunOnce() throws Exception {
        Node one = start("node-1", 7911);
        Node two = start("node-2", 7912);
        awaitMembers(2);
        for (int round = 0; round < 3; round++) {
            String raced = "optimistic-" + UUID.randomUUID();
            List<CompletableFuture<String>> answers = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                answers.add(getAsync(i % 2 == 0 ? one : two, "optimistic?workMillis=500&key=" + raced));
            }
            int executed = 0;
            for (CompletableFuture<String> a : answers) {
                String answer = a.get(120, TimeUnit.SECONDS);
                assertThat(answer).isIn("executed", "replayed");
                executed += answer.equals("executed") ? 1 : 0;
            }
            assertThat(executed).isEqualTo(1);
            assertThat(effects(raced)).isEqualTo(1);
        }
        long works = Long.parseLong(get(one, "works")) + Long.parseLong(get(two, "works"));
        assertThat(works).as("the work began once per key on the two nodes together: no loser ran and rolled back").isEqualTo(3);
    }

    @Test
    void flushingTheCacheMidRunNeverMakesAKeyRunTwice() throws Exception {
        Node one = start("node-1", 7911);
        Node two = start("node-2", 7912);
        awaitMembers(2);
        String key = "flushed-" + UUID.randomUUID();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < 48; i++) {
            answers.add(getAsync(i % 2 == 0 ? one : two, "run?key=" + key));
            if (i % 8 == 0) {
                answers.add(getAsync(i % 16 == 0 ? one : two, "flush").thenApply(s -> "replayed"));
            }
        }
        for (CompletableFuture<String> a : answers) {
            assertThat(a.get(120, TimeUnit.SECONDS)).isIn("executed", "replayed", "conflict");
        }
        get(one, "flush");
        get(two, "flush");
        assertThat(get(one, "run?key=" + key)).isEqualTo("replayed");
        assertThat(get(two, "run?key=" + key)).isEqualTo("replayed");
        assertThat(effects(key)).isEqualTo(1);
    }

    /**
     * {@code idempotency.cache.clustering=distributed}: three nodes, each entry on one owner, so that most nodes read a
     * finished key from another node and hear of a completion through a clustered listener, not their own copy.
     */
    @Test
    void distributedWithOneOwnerRunsOnceAnswersEveryNodeWithoutSqlAndWakesNonOwners() throws Exception {
        List<String> distributed = List.of("-Didempotency.test.cache=distributed:1");
        Node one = processes.start("node-1", 7911, HOSTS, LEASE_MILLIS, distributed);
        Node two = processes.start("node-2", 7912, HOSTS, LEASE_MILLIS, distributed);
        Node three = processes.start("node-3", 7913, HOSTS, LEASE_MILLIS, distributed);
        awaitMembers(3);
        List<Node> all = List.of(one, two, three);

        String raced = "dist-raced-" + UUID.randomUUID();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < 48; i++) {
            answers.add(getAsync(all.get(i % 3), "run?key=" + raced));
        }
        int executed = 0;
        for (CompletableFuture<String> a : answers) {
            String answer = a.get(120, TimeUnit.SECONDS);
            assertThat(answer).isIn("executed", "replayed", "conflict");
            executed += answer.equals("executed") ? 1 : 0;
        }
        assertThat(executed).isEqualTo(1);
        assertThat(effects(raced)).isEqualTo(1);
        processes.assertReplayedWithoutSql(all, raced);

        // Waiters on nodes 2 and 3, woken by node 1's completion.
        String awaited = "dist-awaited-" + UUID.randomUUID();
        processes.assertWokenByTheCompletion(one, List.of(two, three), awaited, LEASE_MILLIS / 2, () -> awaitClaimed(awaited));
        assertThat(effects(awaited)).isEqualTo(1);
    }

    /** Until the key's record exists, claimed by some node (the claim commits before the operation runs). */
    static void awaitClaimed(String key) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (TestDatabase.POSTGRES.count("select count(*) from idempotency_record where idem_key = '" + key + "'") == 0) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
