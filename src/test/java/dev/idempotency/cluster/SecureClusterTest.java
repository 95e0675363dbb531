package dev.idempotency.cluster;

import dev.idempotency.cluster.ClusterProcesses.Node;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 22: the built-in cluster with a secret ({@code idempotency.cache.secret}: SYM_ENCRYPT, SERIALIZE, AUTH), nodes
 * in JVMs of their own sharing PostgreSQL. Two nodes with the secret form a cluster and replay each other's keys
 * from the cache; a third JVM without the secret, and a fourth with a wrong one, reach the same ports and initial
 * hosts but never join (no view of theirs ever holds a node with the secret, and no view of those holds them), never
 * receive an entry, and answer a finished key from the store: one execution.
 */
class SecureClusterTest {

    static final String HOSTS = "127.0.0.1[7931],127.0.0.1[7932],127.0.0.1[7933],127.0.0.1[7934]";
    static final long LEASE_MILLIS = 3000;
    static final String SECRET = "an example secret, 32 characters or more, shared by the nodes";

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

    static long effects(String key) {
        return TestDatabase.POSTGRES.count("select count(*) from cluster_effect where idem_key = '" + key + "'");
    }

    @Test
    void aNodeWithoutTheSecretNeverJoinsNorReadsAnEntry() throws Exception {
        Node one = processes.start("node-1", 7931, HOSTS, LEASE_MILLIS, SECRET);
        Node two = processes.start("node-2", 7932, HOSTS, LEASE_MILLIS, SECRET);
        processes.awaitMembers(2, List.of(one, two));

        // The secret's cluster works: a key finished on node 1 is replayed by node 2 from the cache (the MAC verifies
        // under the shared secret), with no SQL.
        String key = "secure-" + UUID.randomUUID();
        assertThat(processes.get(one, "run?key=" + key)).isEqualTo("executed");
        assertThat(processes.get(two, "peek?key=" + key)).isEqualTo("present done by node-1");
        long before = Long.parseLong(processes.get(two, "statements"));
        assertThat(processes.get(two, "run?key=" + key)).isEqualTo("replayed");
        assertThat(Long.parseLong(processes.get(two, "statements"))).as("node 2 replayed from the cache").isEqualTo(before);

        // Two strangers at once: no secret (a plain stack, as allowed on loopback), and a wrong one. Each tries to join
        // through the same initial hosts until GMS gives up and it becomes a cluster of one: then it serves.
        // Two threads of the test's own: each start blocks for up to a minute, and the common pool may have a single
        // worker (two cores; since JDK 25 CompletableFuture uses it even then), which would start them one by one.
        java.util.concurrent.ExecutorService starters = java.util.concurrent.Executors.newFixedThreadPool(2);
        Node strangerPlain;
        Node strangerWrong;
        try {
            CompletableFuture<Node> plain = CompletableFuture.supplyAsync(() -> start("stranger-plain", 7933), starters);
            CompletableFuture<Node> wrong = CompletableFuture.supplyAsync(
                    () -> start("stranger-wrong", 7934, "a wrong secret, also 32 characters or more long"), starters);
            strangerPlain = plain.get(150, TimeUnit.SECONDS);
            strangerWrong = wrong.get(150, TimeUnit.SECONDS);
        } finally {
            starters.shutdown();
        }

        for (Node stranger : List.of(strangerPlain, strangerWrong)) {
            assertThat(processes.get(stranger, "members")).as(stranger.name() + " is alone; the views it installed: "
                    + processes.get(stranger, "views")).isEqualTo("1");
            assertThat(processes.get(stranger, "views").lines().toList()).as("every view " + stranger.name() + " installed")
                    .allSatisfy(v -> assertThat(v).doesNotContain("node-1").doesNotContain("node-2"));
            // It holds no entry of the cluster's: the replicated cache never reached it.
            assertThat(processes.get(stranger, "peek?key=" + key)).as(stranger.name() + "'s cache").isEqualTo("absent");
        }
        for (Node member : List.of(one, two)) {
            assertThat(processes.get(member, "members")).isEqualTo("2");
            assertThat(processes.get(member, "views").lines().toList()).as("every view " + member.name() + " installed")
                    .allSatisfy(v -> assertThat(v).doesNotContain("stranger"));
        }

        // A key finished after the strangers came: still replicated between the two, never to the strangers.
        String later = "later-" + UUID.randomUUID();
        assertThat(processes.get(two, "run?key=" + later)).isEqualTo("executed");
        assertThat(processes.get(one, "peek?key=" + later)).isEqualTo("present done by node-2");
        for (Node stranger : List.of(strangerPlain, strangerWrong)) {
            assertThat(processes.get(stranger, "peek?key=" + later)).isEqualTo("absent");
            // The store answers it (they share the database, which is trusted): a replay, never a second execution.
            assertThat(processes.get(stranger, "run?key=" + later)).isEqualTo("replayed");
            assertThat(processes.get(stranger, "run?key=" + key)).isEqualTo("replayed");
        }
        assertThat(effects(key)).isEqualTo(1);
        assertThat(effects(later)).isEqualTo(1);
        for (Node n : List.of(one, two, strangerPlain, strangerWrong)) {
            assertThat(processes.get(n, "rejected")).as(n.name() + " saw no entry it had to reject").isEqualTo("0");
        }
    }

    private Node start(String name, int port, String... secret) {
        try {
            return processes.start(name, port, HOSTS, LEASE_MILLIS, secret);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
