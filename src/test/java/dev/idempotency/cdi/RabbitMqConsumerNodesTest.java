package dev.idempotency.cdi;

import dev.idempotency.testing.RabbitMq;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RabbitMQ consumers in JVMs of their own ({@link RabbitMqConsumerNode}: SmallRye's RabbitMQ connector, manual
 * acknowledgements, a prefetch of 10, {@code @Idempotent} by header on PostgreSQL), against the machine's RabbitMQ, in
 * the atomic and the leased claim mode. A consumer SIGKILLed after a message's write, before its commit: RabbitMQ gives
 * its unacknowledged messages to a second consumer. Two consumers competing on one queue while it fills, duplicates
 * among the messages. Each time: one business row per key, every message acknowledged, none refused.
 */
class RabbitMqConsumerNodesTest {

    static final String QUEUE = "rabbit-nodes";

    RabbitMq broker;
    final List<ConsumerProcess> nodes = new ArrayList<>();

    @BeforeEach
    void queueAndTables() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        broker = RabbitMq.connect();
        broker.freshQueue(QUEUE);
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS rabbit_effect");
            s.execute("CREATE TABLE rabbit_effect (k VARCHAR(100) NOT NULL, node VARCHAR(40) NOT NULL)");
        }
    }

    @AfterEach
    void killNodes() throws InterruptedException {
        for (ConsumerProcess n : nodes) {
            n.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        if (broker != null) {
            broker.close();
        }
    }

    /**
     * 150 keys, then a duplicate (a new message-id, the same header) of each of the first 40, then 20 more at random
     * places: the first consumer is killed while it holds K-050 after its write, before its commit. The duplicates of
     * keys it finished reach the second consumer, which acknowledges them without running them; K-050 and the
     * messages prefetched behind it come again and run there, once. In the leased mode the second waits for the dead
     * node's lease on K-050 (5 s) to run out.
     */
    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "leased"})
    void aConsumerKilledBeforeItsCommitLeavesItsMessagesToTheNextOneRunOnce(String claim) throws Exception {
        List<String> keys = keys("K", 150);
        List<String> sent = new ArrayList<>(keys);
        sent.addAll(keys.subList(0, 40));
        Random random = new Random(60);
        for (int i = 0; i < 20; i++) {
            sent.add(1 + random.nextInt(sent.size() - 1), keys.get(random.nextInt(keys.size())));
        }
        ConsumerProcess first = start("first", claim);
        first.send("HOLD K-050");
        publish(sent);
        first.await("WROTE K-050");
        first.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        Set<String> doneBeforeTheKill = first.said("ACKED ");
        assertThat(doneBeforeTheKill).as("the first consumer finished messages before it was killed").isNotEmpty()
                .doesNotContain("K-050");

        ConsumerProcess second = start("second", claim);
        BrokerConsumers.await("every message acknowledged", 120, () -> broker.unsettled(QUEUE) == 0,
                () -> "unsettled " + broker.unsettled(QUEUE) + ", rows " + rows().size());
        Map<String, Integer> rows = rows();
        assertThat(rows.keySet()).as("every key ran").containsExactlyInAnyOrderElementsOf(keys);
        assertThat(rows).as("one row per key").allSatisfy((k, n) -> assertThat(n).as(k).isOne());
        assertThat(second.said("RECEIVED ")).as("the held message came again, to the second consumer").contains("K-050")
                .as("and duplicates of keys the first one finished").containsAnyElementsOf(doneBeforeTheKill);
        assertThat(second.said("WROTE ")).as("those were not run again").doesNotContainAnyElementsOf(doneBeforeTheKill)
                .contains("K-050");
        assertThat(first.lines).noneMatch(l -> l.startsWith("NACKED"));
        assertThat(second.lines).noneMatch(l -> l.startsWith("NACKED"));
    }

    /**
     * 1,000 messages, 800 keys and 200 duplicates by header (100 right behind their first message, so that the two
     * consumers often hold the same key at once, and 100 anywhere), published while two consumers take them from one
     * queue.
     */
    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "leased"})
    void twoCompetingConsumersRunEachKeyOnce(String claim) throws Exception {
        List<String> keys = keys("C", 800);
        List<String> sent = new ArrayList<>(keys);
        Random random = new Random(61);
        for (int i = 0; i < 100; i++) {
            int at = random.nextInt(sent.size());
            sent.add(at + 1, sent.get(at));
        }
        for (int i = 0; i < 100; i++) {
            sent.add(random.nextInt(sent.size() + 1), keys.get(random.nextInt(keys.size())));
        }
        assertThat(sent).hasSize(1_000);
        ConsumerProcess a = start("a", claim);
        ConsumerProcess b = start("b", claim);
        publish(sent);
        BrokerConsumers.await("every message acknowledged", 120, () -> broker.unsettled(QUEUE) == 0,
                () -> "unsettled " + broker.unsettled(QUEUE) + ", rows " + rows().size());
        Map<String, Integer> rows = rows();
        assertThat(rows.keySet()).as("every key ran").containsExactlyInAnyOrderElementsOf(keys);
        assertThat(rows).as("one row per key").allSatisfy((k, n) -> assertThat(n).as(k).isOne());
        assertThat(a.said("WROTE ")).as("both consumers ran messages").isNotEmpty();
        assertThat(b.said("WROTE ")).isNotEmpty();
        assertThat(acknowledged(a, b, 1_000)).as("every message acknowledged once")
                .isEqualTo(1_000);
        assertThat(a.lines).noneMatch(l -> l.startsWith("NACKED"));
        assertThat(b.lines).noneMatch(l -> l.startsWith("NACKED"));
    }

    /**
     * The acknowledgements the consumers said, once they said {@code expected} or 30 s went by (their lines reach this
     * JVM through pipes, a moment after the broker saw the acknowledgements).
     */
    static long acknowledged(ConsumerProcess a, ConsumerProcess b, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long acked = count(a) + count(b);
        while (acked < expected && System.nanoTime() < deadline) {
            Thread.sleep(50); // polling the lines read from their output
            acked = count(a) + count(b);
        }
        return acked;
    }

    private static long count(ConsumerProcess p) {
        return p.lines.stream().filter(l -> l.startsWith("ACKED ")).count();
    }

    static List<String> keys(String prefix, int n) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(String.format("%s-%03d", prefix, i));
        }
        return keys;
    }

    /** Each key a message of its own: a message-id of its own, the key as its body and its Idempotency-Key header. */
    void publish(List<String> sent) throws Exception {
        int id = 0;
        for (String key : sent) {
            broker.publish(QUEUE, key, "m-" + id++, Map.of("Idempotency-Key", key));
        }
    }

    /** The business rows, by key. */
    static Map<String, Integer> rows() {
        Map<String, Integer> rows = new TreeMap<>();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select k, count(*) from rabbit_effect group by k")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        return rows;
    }

    ConsumerProcess start(String name, String claim) throws Exception {
        ConsumerProcess node = RabbitMqConsumerNode.start(QUEUE, name, claim);
        nodes.add(node);
        return node;
    }
}
