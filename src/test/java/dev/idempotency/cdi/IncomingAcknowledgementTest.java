package dev.idempotency.cdi;


import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.TestDatabase;

import io.smallrye.reactive.messaging.memory.InMemoryConnector;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a consumer of the {@code Message} has its record acknowledged or refused, on SmallRye Reactive Messaging's
 * in-memory connector with H2 and Narayana: a record without its (optional) key is settled as a keyed one is, after its
 * transaction; outside a transaction an acknowledgement waits for the call to return, and a failure after it refuses the
 * record once; an acknowledgement asked for on another thread by a stage that completes later waits for the call's
 * commit; a stage that fails later refuses the record, and the channel goes on. Each record is answered once.
 */
class IncomingAcknowledgementTest {

    static final String[] CHANNELS = {"optional-key", "leased-no-tx", "later", "later-fail", "nested", "nested-apart", "nested-kept", "nested-recovers"};

    @ApplicationScoped
    public static class Consumers {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Inject
        TransactionSynchronizationRegistry tsr;

        /** A record without the header is run (required = false): it acks, then its transaction is marked for rollback. */
        @Incoming("optional-key")
        @Idempotent(messageProperty = "Idempotency-Key", required = false)
        @Transactional
        public CompletionStage<Void> optionalKey(Message<String> message) throws SQLException {
            write("optional-key", message.getPayload());
            CompletionStage<Void> acked = message.ack();
            if (message.getPayload().startsWith("rollback")) {
                tsr.setRollbackOnly(); // the work will not commit
            }
            return acked;
        }

        /** Leased, no transaction: acks, then throws. */
        @Incoming("leased-no-tx")
        @Idempotent(messageProperty = "Idempotency-Key", claim = dev.idempotency.ClaimMode.LEASED)
        public CompletionStage<Void> leasedNoTx(Message<String> message) throws SQLException {
            write("leased-no-tx", message.getPayload());
            CompletionStage<Void> acked = message.ack();
            if (message.getPayload().startsWith("throw")) {
                throw new IllegalStateException("failed after its ack");
            }
            return acked;
        }

        @Inject
        Ledger ledger;

        /** Leased, no transaction of its own: its work and its ack are in a transaction of a bean it calls. */
        @Incoming("nested")
        @Idempotent(messageProperty = "Idempotency-Key", claim = dev.idempotency.ClaimMode.LEASED)
        public CompletionStage<Void> nested(Message<String> message) throws SQLException {
            return ledger.book(message);
        }

        /**
         * Atomic or optimistic, in its own transaction: writes, then has a bean book the record and acknowledge it in a
         * transaction of its own (REQUIRES_NEW); "outer-fails-" records fail after that, on their first delivery.
         */
        @Incoming("nested-apart")
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> nestedApart(Message<String> message) throws SQLException {
            write("nested-apart-outer", message.getPayload());
            CompletionStage<Void> acked = ledger.bookApart(message);
            if (message.getPayload().startsWith("outer-fails") && outerFailures.add(message.getPayload())) {
                throw new IllegalStateException("the consumer failed after its bean acknowledged the record");
            }
            return acked;
        }

        final java.util.Set<String> outerFailures = ConcurrentHashMap.newKeySet();

        /** As {@link #nestedApart}, keeping every runtime failure as its outcome ({@code keepOn}). */
        @Incoming("nested-kept")
        @Idempotent(messageProperty = "Idempotency-Key", keepOn = RuntimeException.class)
        @Transactional
        public CompletionStage<Void> nestedKept(Message<String> message) throws SQLException {
            write("nested-kept-outer", message.getPayload());
            return ledger.bookApart(message);
        }

        /** Its bean's transaction may roll back; it acknowledges the record again in its own, having decided to go on. */
        @Incoming("nested-recovers")
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> nestedRecovers(Message<String> message) throws SQLException {
            write("nested-recovers-outer", message.getPayload());
            ledger.bookApart(message);
            return message.ack();
        }

        /** Writes in its transaction, and acks from a stage that completes later (Narayana ends the transaction with it). */
        @Incoming("later")
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> later(Message<String> message) throws SQLException {
            write("later", message.getPayload());
            return java.util.concurrent.CompletableFuture.runAsync(Consumers::pause).thenCompose(v -> message.ack());
        }

        /** Writes in its transaction, and returns a stage that fails later (no ack, no nack asked for). */
        @Incoming("later-fail")
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> laterFail(Message<String> message) throws SQLException {
            write("later-fail", message.getPayload());
            if (message.getPayload().startsWith("fail")) {
                return java.util.concurrent.CompletableFuture.runAsync(Consumers::pause)
                        .thenCompose(v -> java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException("failed later")));
            }
            return message.ack();
        }

        /** What makes the stage complete later, on another thread. */
        static void pause() {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void write(String channel, String payload) throws SQLException {
            InMemoryRecords.write(dataSource, channel, payload);
        }
    }

    /**
     * A bean the consumer calls: writes and acknowledges in its own transaction, which a "rollback-" record rolls back on
     * its first delivery.
     */
    @ApplicationScoped
    public static class Ledger {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Inject
        TransactionSynchronizationRegistry tsr;

        @Transactional
        public CompletionStage<Void> book(Message<String> message) throws SQLException {
            InMemoryRecords.write(dataSource, "nested", message.getPayload());
            CompletionStage<Void> acked = message.ack();
            if (message.getPayload().startsWith("rollback") && rolledBack.add("nested " + message.getPayload())) {
                tsr.setRollbackOnly();
            }
            return acked;
        }

        /** The same in a new transaction of its own, whatever the caller's. */
        @Transactional(Transactional.TxType.REQUIRES_NEW)
        public CompletionStage<Void> bookApart(Message<String> message) throws SQLException {
            InMemoryRecords.write(dataSource, "nested-apart", message.getPayload());
            CompletionStage<Void> acked = message.ack();
            if (message.getPayload().startsWith("rollback") && rolledBack.add("apart " + message.getPayload())) {
                tsr.setRollbackOnly();
            }
            return acked;
        }

        final java.util.Set<String> rolledBack = ConcurrentHashMap.newKeySet();
    }

    /** Committed rows seen at the moment each record was acknowledged (by the connector's ack). */
    final Map<String, Long> rowsAtAck = new ConcurrentHashMap<>();
    final InMemoryRecords records = new InMemoryRecords(
            d -> rowsAtAck.put(d.name, TestDatabase.H2.count("select count(*) from incoming_effect")));
    final List<InMemoryRecords.Delivery> deliveries = records.deliveries;

    <T> Message<T> record(String topic, int partition, long offset, String key, String value, T payload) {
        return records.record(topic, partition, offset, key, value, payload);
    }

    void boot(String claim) throws SQLException {
        records.boot(claim, Consumers.class, CHANNELS, Ledger.class);
    }

    @AfterEach
    void stop() {
        records.close();
    }

    InMemoryConnector connector() {
        return records.connector();
    }

    static long rows(String channel, String payload) {
        return InMemoryRecords.rows(channel, payload);
    }

    private void awaitSettled(int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (deliveries.stream().anyMatch(d -> d.acks + d.nacks == 0) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    private String states() {
        return deliveries.stream().map(d -> d.name + " " + d.acks + "/" + d.nacks).toList().toString();
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void aRecordWithoutItsOptionalKeyIsNotAcknowledgedWhenItsTransactionRollsBack(String claim) throws Exception {
        boot(claim);
        connector().source("optional-key").send(record("orders", 0, 1, null, "rollback-1", "rollback-1"));
        awaitSettled(10);
        assertThat(rows("optional-key", "rollback-1")).as("its work rolled back").isZero();
        assertThat(deliveries.get(0).acks + "/" + deliveries.get(0).nacks)
                .as("a record whose work rolled back is refused, not acknowledged (" + states() + ")").isEqualTo("0/1");
    }

    @org.junit.jupiter.api.Test
    void aLeasedConsumerWithoutATransactionThatAcksThenThrowsIsAnsweredOnce() throws Exception {
        boot("leased");
        connector().source("leased-no-tx").send(record("orders", 0, 1, "k-1", "throw-1", "throw-1"));
        // the channel takes one record at a time: once the next one is answered, the first one's answers are all in
        connector().source("leased-no-tx").send(record("orders", 0, 2, "k-2", "ok-2", "ok-2"));
        awaitSettled(10);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks)
                .as("the failed call's record refused once, not acknowledged too; the next one acknowledged: " + states())
                .containsExactly("0/1", "1/0");
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic"})
    void anAckFromAStageThatCompletesLaterWaitsForTheCommit(String claim) throws Exception {
        boot(claim);
        connector().source("later").send(record("orders", 0, 1, "l-1", "later-1", "later-1"));
        awaitSettled(10);
        assertThat(deliveries.get(0).acks).as(states()).isEqualTo(1);
        assertThat(rowsAtAck.get("orders/0/1")).as("the work was committed when the record was acknowledged").isEqualTo(1L);
    }

    @org.junit.jupiter.api.Test
    void anAcknowledgementInATransactionOfACalledBeanWaitsForThatTransaction() throws Exception {
        boot("leased");
        connector().source("nested").send(record("orders", 0, 1, "n-1", "rollback-1", "rollback-1"));
        connector().source("nested").send(record("orders", 0, 2, "n-2", "fine-2", "fine-2"));
        awaitSettled(10);
        assertThat(rows("nested", "rollback-1")).as("its work rolled back").isZero();
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks)
                .as("the rolled back one refused, the committed one acknowledged: " + states()).containsExactly("0/1", "1/0");
        assertThat(rowsAtAck.get("orders/0/2")).as("acknowledged once its work committed").isEqualTo(1L);
    }

    /**
     * The record whose bean rolled back its acknowledgement's transaction is refused, and its key not kept as done: its
     * redelivery runs (once the bean's transaction commits, it is acknowledged). It failed before: the key was stored
     * done with the call, and the redelivery was acknowledged without running, its work lost.
     */
    @org.junit.jupiter.api.Test
    void aRecordWhoseBeanRolledBackIsRunAgainOnItsRedelivery() throws Exception {
        boot("leased");
        connector().source("nested").send(record("orders", 0, 1, "n-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        connector().source("nested").send(record("orders", 0, 1, "n-1", "rollback-1", "rollback-1")); // its redelivery
        awaitSettled(10);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks)
                .as("refused, then run and acknowledged: " + states()).containsExactly("0/1", "1/0");
        assertThat(rows("nested", "rollback-1")).as("the redelivery's work committed").isEqualTo(1);
    }

    /**
     * In a consumer's own transaction (atomic, optimistic), a bean that acknowledges in a transaction of its own
     * (REQUIRES_NEW): a rollback there fails the call (its work and its claim roll back, the record is refused and runs
     * again); a commit there acknowledges nothing until the consumer's own transaction commits, so a consumer that fails
     * afterwards has its record refused, not acknowledged (before, the acknowledgement went out with the bean's commit and
     * the consumer's rolled back work was lost).
     */
    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic"})
    void anAcknowledgementInABeansOwnTransactionWaitsForTheConsumersToo(String claim) throws Exception {
        boot(claim);
        connector().source("nested-apart").send(record("orders", 0, 1, "a-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        connector().source("nested-apart").send(record("orders", 0, 1, "a-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        connector().source("nested-apart").send(record("orders", 0, 2, "a-2", "outer-fails-2", "outer-fails-2"));
        awaitSettled(10);
        connector().source("nested-apart").send(record("orders", 0, 2, "a-2", "outer-fails-2", "outer-fails-2"));
        awaitSettled(10);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks)
                .as("each refused once, then run and acknowledged: " + states()).containsExactly("0/1", "1/0", "0/1", "1/0");
        assertThat(rows("nested-apart-outer", "rollback-1")).as("the consumer's work, once").isEqualTo(1);
        assertThat(rows("nested-apart", "rollback-1")).as("the bean's work, once (its first transaction rolled back)").isEqualTo(1);
        assertThat(rows("nested-apart-outer", "outer-fails-2")).as("the consumer's work, once (its first rolled back)").isEqualTo(1);
        assertThat(rowsAtAck.get("orders/0/2")).as("acknowledged once the consumer's transaction committed too").isNotNull();
    }

    /**
     * Work that did not all happen is the library's failure, never the call's outcome to keep: with {@code keepOn}
     * matching every runtime failure, the record whose bean rolled back is still refused and its redelivery runs.
     */
    @org.junit.jupiter.api.Test
    void aBeansRollbackIsNeverKeptAsTheOutcome() throws Exception {
        boot("atomic");
        connector().source("nested-kept").send(record("orders", 0, 1, "k-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        connector().source("nested-kept").send(record("orders", 0, 1, "k-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks).as("refused, then run: " + states()).containsExactly("0/1", "1/0");
        assertThat(rows("nested-apart", "rollback-1")).as("the bean's work, on the redelivery").isEqualTo(1);
    }

    /**
     * A method that acknowledges its record again in its own transaction, after a bean's acknowledgement rolled back,
     * has decided to go on: its record is acknowledged once its transaction commits, and runs once.
     */
    @org.junit.jupiter.api.Test
    void theMethodsOwnLaterAcknowledgementWins() throws Exception {
        boot("atomic");
        connector().source("nested-recovers").send(record("orders", 0, 1, "r-1", "rollback-1", "rollback-1"));
        awaitSettled(10);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks).as("acknowledged: " + states()).containsExactly("1/0");
        assertThat(rows("nested-recovers-outer", "rollback-1")).as("the method's own work committed").isEqualTo(1);
        assertThat(rows("nested-apart", "rollback-1")).as("the bean's rolled back").isZero();
    }

    @org.junit.jupiter.api.Test
    void aStageThatFailsLaterIsRefusedAndTheChannelGoesOn() throws Exception {
        boot("atomic");
        connector().source("later-fail").send(record("orders", 0, 1, "f-1", "fail-1", "fail-1"));
        awaitSettled(5);
        connector().source("later-fail").send(record("orders", 0, 2, "ok-2", "ok-2", "ok-2"));
        awaitSettled(5);
        assertThat(deliveries).extracting(d -> d.acks + "/" + d.nacks)
                .as("the failed record refused, the next one acknowledged: " + states()).containsExactly("0/1", "1/0");
    }
}
