package dev.idempotency.cdi;

import dev.idempotency.testing.KafkaBroker;
import dev.idempotency.testing.TestDatabase;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka consumers that are killed and that share a group, against a real broker: SmallRye Reactive Messaging's Kafka
 * connector in JVMs of their own ({@link KafkaConsumerNode}), {@code @Idempotent} by header with atomic claims on
 * PostgreSQL. A consumer SIGKILLed after a record's write, before its commit, and a second member joining the group
 * while the first still runs a record (the rebalance hands that record's partition, uncommitted, to the newcomer):
 * one business row per key, every record acknowledged, nothing lost.
 */
class KafkaConsumerNodesTest {

    /** The rebalance test's {@code max.poll.interval.ms}: the first member's run lasts longer. */
    static final long MAX_POLL_INTERVAL_MILLIS = 5_000;

    static KafkaBroker broker;

    final List<ConsumerProcess> nodes = new ArrayList<>();

    @BeforeAll
    static void startBroker() {
        TestDatabase.POSTGRES.assumeAvailable();
        broker = KafkaBroker.start(Path.of("target", "kafka-nodes"));
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @BeforeEach
    void emptyTables() throws SQLException {
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS kafka_effect");
            s.execute("CREATE TABLE kafka_effect (k VARCHAR(100) NOT NULL, node VARCHAR(40) NOT NULL)");
        }
    }

    @AfterEach
    void killNodes() {
        nodes.forEach(n -> n.process.destroyForcibly());
    }

    @Test
    @DisplayName("A consumer SIGKILLed after a record's write, before its commit: after the restart one row per key, nothing lost")
    void killedMidBatch() throws Exception {
        broker.createTopic("crash", 3);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 240; i++) {
            keys.add(String.format("C-%03d", i));
        }
        // the first consumer never commits an offset before it dies: its successor gets every record again
        ConsumerProcess first = start("crash", "crash-group", "first", 600_000);
        first.send("HOLD C-120");
        Random random = new Random(8);
        List<String> sent = new ArrayList<>(keys);
        for (int i = 0; i < 60; i++) { // 60 duplicates by header among the 240 keys: 300 records
            sent.add(1 + random.nextInt(sent.size() - 1), keys.get(random.nextInt(keys.size())));
        }
        produce("crash", sent, random);
        first.await("WROTE C-120");
        first.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        Set<String> doneBeforeTheKill = first.said("WROTE ");
        doneBeforeTheKill.remove("C-120");
        assertThat(doneBeforeTheKill).as("the first consumer ran records before it was killed").isNotEmpty();

        ConsumerProcess second = start("crash", "crash-group", "second", 1_000);
        awaitTrue("every record acknowledged", () -> broker.allCommitted("crash-group", "crash"));
        Map<String, Integer> rows = rows();
        assertThat(rows.keySet()).as("every key paid").containsExactlyInAnyOrderElementsOf(keys);
        assertThat(rows).as("one row per key").allSatisfy((k, n) -> assertThat(n).as(k).isOne());
        assertThat(second.said("RECEIVED ")).as("the records the first consumer ran came again")
                .containsAll(doneBeforeTheKill);
        assertThat(second.said("WROTE ")).as("and were not run again").doesNotContainAnyElementsOf(doneBeforeTheKill)
                .contains("C-120");
        assertThat(second.lines).noneMatch(l -> l.startsWith("NACKED"));
    }

    @Test
    @DisplayName("A second member joins while the first runs a record longer than max.poll.interval.ms: the record's partition moves, the newcomer waits for its outcome, one row per key")
    void rebalanceWhileARecordRuns() throws Exception {
        broker.createTopic("rebalance", 2);
        ConsumerProcess first = start("rebalance", "rebalance-group", "first", 1_000, MAX_POLL_INTERVAL_MILLIS);
        first.send("HOLD SLOW");
        // the held key heads both partitions, so that whichever partition the newcomer gets, its first record is the
        // one the first member is running, uncommitted
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            keys.add(String.format("R-%03d", i));
        }
        try (KafkaProducer<String, String> producer = broker.producer()) {
            producer.send(record("rebalance", 0, "SLOW")).get(30, TimeUnit.SECONDS);
            producer.send(record("rebalance", 1, "SLOW")).get(30, TimeUnit.SECONDS);
        }
        Random random = new Random(48);
        List<String> sent = new ArrayList<>(keys);
        for (int i = 0; i < 20; i++) {
            sent.add(keys.get(random.nextInt(keys.size())));
        }
        produce("rebalance", sent, random);
        first.await("WROTE SLOW");
        long held = System.nanoTime();

        ConsumerProcess second = start("rebalance", "rebalance-group", "second", 1_000, MAX_POLL_INTERVAL_MILLIS);
        second.await("RECEIVED SLOW");
        assertThat(second.said("WROTE ")).as("the newcomer does not run the record the first member runs").isEmpty();
        // the first member's run lasts longer than max.poll.interval.ms (the scenario's length, not a synchronisation)
        long heldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - held);
        if (heldMillis <= MAX_POLL_INTERVAL_MILLIS) {
            Thread.sleep(MAX_POLL_INTERVAL_MILLIS + 1_000 - heldMillis);
        }
        assertThat(second.said("WROTE ")).as("the newcomer still waits for the first member's outcome").isEmpty();
        first.send("RELEASE SLOW");
        awaitTrue("every record acknowledged", () -> broker.allCommitted("rebalance-group", "rebalance"));
        Map<String, Integer> rows = rows();
        assertThat(rows).as("one row per key").allSatisfy((k, n) -> assertThat(n).as(k).isOne());
        assertThat(rows.keySet()).containsAll(keys).contains("SLOW");
        assertThat(second.said("WROTE ")).as("the newcomer never ran the held record").doesNotContain("SLOW");
        assertThat(second.said("ACKED ")).as("it acknowledged it once the first member's run committed").contains("SLOW");
        assertThat(second.said("WROTE ")).as("and ran records of its own partition").isNotEmpty();
        assertThat(first.lines).noneMatch(l -> l.startsWith("NACKED"));
        assertThat(second.lines).noneMatch(l -> l.startsWith("NACKED"));
    }

    static ProducerRecord<String, String> record(String topic, int partition, String key) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, null, key);
        r.headers().add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
        return r;
    }

    static void produce(String topic, List<String> keys, Random random) throws Exception {
        int partitions = broker.partitions(topic);
        try (KafkaProducer<String, String> producer = broker.producer()) {
            List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
            for (String key : keys) {
                acks.add(producer.send(record(topic, random.nextInt(partitions), key)));
            }
            for (java.util.concurrent.Future<?> ack : acks) {
                ack.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The business rows, by key. */
    static Map<String, Integer> rows() {
        Map<String, Integer> rows = new TreeMap<>();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select k, count(*) from kafka_effect group by k")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        return rows;
    }

    static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out waiting until " + what);
            }
            Thread.sleep(200);
        }
    }

    ConsumerProcess start(String topic, String group, String name, long commitIntervalMillis) throws Exception {
        return start(topic, group, name, commitIntervalMillis, 10_000);
    }

    ConsumerProcess start(String topic, String group, String name, long commitIntervalMillis, long maxPollIntervalMillis)
            throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-kafka-" + name,
                "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-kafka-" + name,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), KafkaConsumerNode.class.getName(),
                broker.bootstrapServers(), topic, group, name, Long.toString(commitIntervalMillis),
                Long.toString(maxPollIntervalMillis))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ConsumerProcess node = new ConsumerProcess(name, p);
        nodes.add(node);
        node.await(KafkaConsumerNode.READY);
        return node;
    }
}
