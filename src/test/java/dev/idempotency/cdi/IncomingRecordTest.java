package dev.idempotency.cdi;


import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.providers.extension.HealthCenter;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} on MicroProfile Reactive Messaging {@code @Incoming} methods, as SmallRye Reactive Messaging
 * calls them (its in-memory connector standing in for Kafka's, the records carrying the Kafka connector's metadata), on
 * H2 with Narayana, in each claim mode: one business row per distinct key (a header, the record's coordinates, or a key
 * inside the payload), every record acknowledged once its transaction committed, a duplicate acknowledged without
 * running, a handler that throws refused (nacked) with nothing kept, and a kept failure acknowledged on its duplicate.
 */
class IncomingRecordTest {

    static final String[] CHANNELS = {"by-header", "by-offset", "by-payload", "failing"};

    WeldContainer container;

    /** The business failure a handler's result keeps: its duplicate is answered with it, never run again. */
    public static class Refused extends Exception {
        public Refused(String message) {
            super(message);
        }
    }

    /** An order event whose id is the key. */
    public record OrderPlaced(@IdempotencyKey String orderId, long amount) {
    }

    /** The consumers: each writes one business row per run, in the transaction the claim joins. */
    @ApplicationScoped
    public static class Consumers {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Inject
        TransactionSynchronizationRegistry tsr;

        /** Whether the ack was asked for while the handler's transaction was still running (it must wait for it). */
        final List<Boolean> ackedInsideTransaction = new CopyOnWriteArrayList<>();

        @Incoming("by-header")
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> byHeader(Message<String> message) throws SQLException {
            write("by-header", message.getPayload());
            ackedInsideTransaction.add(tsr.getTransactionKey() != null);
            boolean failing = booms.merge(message.getPayload(), -1, Integer::sum) >= 0;
            if (failing && message.getPayload().startsWith("nack")) {
                return message.nack(new IllegalStateException("refused " + message.getPayload()));
            }
            CompletionStage<Void> acked = message.ack();
            if (failing && message.getPayload().startsWith("throw")) {
                throw new IllegalStateException("failed after its ack: " + message.getPayload());
            }
            return acked;
        }

        public List<Boolean> acksAsked() {
            return List.copyOf(ackedInsideTransaction);
        }

        public void failOnce(String value) {
            booms.put(value, 1);
        }

        public Map<String, Integer> runs() {
            return Map.copyOf(runs);
        }

        @Incoming("by-offset")
        @Idempotent
        public void byOffset(ConsumerRecord<String, String> record) throws SQLException {
            write("by-offset", record.value());
        }

        @Incoming("by-payload")
        @Idempotent
        public void byPayload(OrderPlaced order) throws SQLException {
            write("by-payload", order.orderId());
        }

        /** "refuse" is a kept failure; "boom" fails (released: the redelivery runs it) until {@link #booms} runs out. */
        @Incoming("failing")
        @Idempotent(keepOn = Refused.class)
        public void failing(ConsumerRecord<String, String> record) throws Exception {
            runs.merge(record.value(), 1, Integer::sum);
            write("failing", record.value());
            if (record.value().startsWith("refuse")) {
                throw new Refused("refused " + record.value());
            }
            if (record.value().startsWith("boom") && booms.merge(record.value(), -1, Integer::sum) >= 0) {
                throw new IllegalStateException("the handler failed on " + record.value());
            }
        }

        final Map<String, Integer> booms = new ConcurrentHashMap<>();
        final Map<String, Integer> runs = new ConcurrentHashMap<>();

        private void write(String channel, String payload) throws SQLException {
            InMemoryRecords.write(dataSource, channel, payload);
        }
    }

    InMemoryRecords records;
    List<InMemoryRecords.Delivery> deliveries;

    <T> Message<T> record(String topic, int partition, long offset, String key, String value, T payload) {
        return records.record(topic, partition, offset, key, value, payload);
    }

    void boot(String claim) throws SQLException {
        records = new InMemoryRecords().boot(claim, Consumers.class, CHANNELS);
        deliveries = records.deliveries;
        container = records.container();
    }

    @AfterEach
    void stop() {
        if (records != null) {
            records.close();
        }
    }

    InMemoryConnector connector() {
        return records.connector();
    }

    static long rows(String channel) {
        return InMemoryRecords.rows(channel);
    }

    static long rows(String channel, String payload) {
        return InMemoryRecords.rows(channel, payload);
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void eachDistinctKeyRunsOnceAndEveryRecordIsAcknowledged(String claim) throws Exception {
        boot(claim);
        InMemoryConnector connector = connector();
        // 20 records by header, 5 of them duplicates of others (another offset, the same key); then every one again.
        List<Message<String>> byHeader = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = "order-" + (i < 15 ? i : i - 15);
            byHeader.add(record("orders", i % 3, i, key, "payload of " + key, "payload of " + key));
        }
        byHeader.forEach(m -> connector.source("by-header").send(m));
        for (int i = 0; i < 20; i++) { // a full redelivery: the group re-reads from offset 0
            String key = "order-" + (i < 15 ? i : i - 15);
            connector.source("by-header").send(record("orders", i % 3, i, key, "payload of " + key, "payload of " + key));
        }
        // 10 records keyed by their coordinates, delivered twice.
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 10; i++) {
                connector.source("by-offset").send(record("payments", 1, 100 + i, null, "payment " + i, null));
            }
        }
        // 8 order events keyed inside the payload, 2 of them duplicates.
        for (int i = 0; i < 8; i++) {
            String id = "o-" + (i < 6 ? i : i - 6);
            connector.source("by-payload").send(record("events", 0, 500 + i, null, id, new OrderPlaced(id, 10)));
        }

        awaitSettled();
        assertThat(rows("by-header")).as("one business row per distinct header key").isEqualTo(15);
        for (int i = 0; i < 15; i++) {
            assertThat(rows("by-header", "payload of order-" + i)).isEqualTo(1);
        }
        assertThat(rows("by-offset")).as("one business row per record, its redelivery not run").isEqualTo(10);
        assertThat(rows("by-payload")).as("one business row per key inside the payload").isEqualTo(6);
        assertThat(deliveries).allSatisfy(d -> {
            assertThat(d.acks).as(d.name + " acknowledged once").isEqualTo(1);
            assertThat(d.nacks).as(d.name + " never refused").isZero();
        });
        Consumers consumers = container.select(Consumers.class).get();
        assertThat(consumers.acksAsked()).as("the handler asked for the ack inside its transaction").contains(true);
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void aHandlerThatThrowsIsRefusedUntilItRunsAndAKeptFailureIsAcknowledged(String claim) throws Exception {
        boot(claim);
        InMemoryConnector connector = connector();
        Consumers consumers = container.select(Consumers.class).get();
        consumers.failOnce("boom-1"); // fails once: its transaction rolls back, the redelivery runs it
        Message<ConsumerRecord<String, String>> first = record("jobs", 0, 1, null, "boom-1", null);
        connector.source("failing").send(first);
        awaitSettled();
        assertThat(deliveries.get(0).nacks).as("the failed delivery is refused, not acknowledged").isEqualTo(1);
        assertThat(deliveries.get(0).acks).isZero();
        // Its write rolled back with the claim's transaction; a leased claim's work commits on its own, and stays.
        boolean leased = claim.equals("leased");
        assertThat(rows("failing", "boom-1")).as("its write rolled back (unless the work commits on its own)").isEqualTo(leased ? 1 : 0);

        connector.source("failing").send(record("jobs", 0, 1, null, "boom-1", null)); // the redelivery
        connector.source("failing").send(record("jobs", 0, 1, null, "boom-1", null)); // and a duplicate of it
        // A kept failure: refused on its first delivery (the handler threw), acknowledged on its duplicates.
        connector.source("failing").send(record("jobs", 0, 2, null, "refuse-2", null));
        connector.source("failing").send(record("jobs", 0, 2, null, "refuse-2", null));
        awaitSettled();
        assertThat(rows("failing", "boom-1")).as("the redelivery ran once").isEqualTo(leased ? 2 : 1);
        assertThat(deliveries.get(1).acks).isEqualTo(1);
        assertThat(deliveries.get(2).acks).as("its duplicate acknowledged without running").isEqualTo(1);
        assertThat(deliveries.get(3).nacks).as("the kept failure's own delivery is refused").isEqualTo(1);
        assertThat(deliveries.get(4).acks).as("a duplicate of a kept failure is acknowledged").isEqualTo(1);
        assertThat(deliveries.get(4).nacks).isZero();
        assertThat(consumers.runs()).as("the failed record ran twice (once refused, once done), the kept failure once")
                .containsEntry("boom-1", 2).containsEntry("refuse-2", 1);
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void aConsumerOfTheMessageRefusesWhatFailsAndItsChannelGoesOn(String claim) throws Exception {
        boot(claim);
        InMemoryConnector connector = connector();
        Consumers consumers = container.select(Consumers.class).get();
        consumers.failOnce("throw-1");
        consumers.failOnce("nack-1");
        connector.source("by-header").send(record("orders", 0, 1, null, "no header", "no header"));
        connector.source("by-header").send(record("orders", 0, 2, "t-1", "throw-1", "throw-1"));
        connector.source("by-header").send(record("orders", 0, 3, "n-1", "nack-1", "nack-1"));
        connector.source("by-header").send(record("orders", 0, 4, "ok-1", "fine", "fine"));
        awaitSettled();
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks).as("refused, refused, refused, acknowledged")
                .containsExactly("0/1", "0/1", "0/1", "1/0");
        assertThat(rows("by-header", "throw-1")).as("the work of a call that failed rolled back").isZero();
        assertThat(rows("by-header", "nack-1")).as("the work of a call that refused its record rolled back").isZero();
        assertThat(rows("by-header", "fine")).as("the channel went on").isEqualTo(1);
        // Their redeliveries run, once.
        connector.source("by-header").send(record("orders", 0, 2, "t-1", "throw-1", "throw-1"));
        connector.source("by-header").send(record("orders", 0, 3, "n-1", "nack-1", "nack-1"));
        connector.source("by-header").send(record("orders", 0, 3, "n-1", "nack-1", "nack-1"));
        awaitSettled();
        assertThat(deliveries.subList(4, 7)).extracting(d -> d.acks + "/" + d.nacks).containsExactly("1/0", "1/0", "1/0");
        assertThat(rows("by-header", "throw-1")).isEqualTo(1);
        assertThat(rows("by-header", "nack-1")).isEqualTo(1);
    }

    /** SmallRye's own view of its channels (a failure it reported, a channel not started). */
    private String health() {
        io.smallrye.reactive.messaging.providers.extension.HealthCenter h = container.select(
                io.smallrye.reactive.messaging.providers.extension.HealthCenter.class).get();
        return "liveness " + h.getLiveness().getChannels().stream().map(c -> c.getChannel() + ":" + c.isOk() + ":" + c.getMessage()).toList()
                + ", readiness " + h.getReadiness().getChannels().stream().map(c -> c.getChannel() + ":" + c.isOk() + ":" + c.getMessage()).toList();
    }

    /** Every record sent so far acknowledged or refused: the in-memory connector calls the handlers on the sender's thread, their stages complete later. */
    private void awaitSettled() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (deliveries.stream().anyMatch(d -> d.acks + d.nacks == 0)) {
            assertThat(System.nanoTime()).as("every record settled within 30 s: " + deliveries.stream()
                    .map(d -> d.name + " " + d.acks + "/" + d.nacks).toList() + ", " + health() + ", rows " + rows("by-header")
                    + ", acks asked " + container.select(Consumers.class).get().acksAsked()).isLessThan(deadline);
            Thread.sleep(10); // polling the counts the connector's callbacks update
        }
    }

}
