package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import io.smallrye.config.inject.ConfigExtension;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.providers.MediatorFactory;
import io.smallrye.reactive.messaging.providers.connectors.ExecutionHolder;
import io.smallrye.reactive.messaging.providers.connectors.WorkerPoolRegistry;
import io.smallrye.reactive.messaging.providers.extension.ChannelProducer;
import io.smallrye.reactive.messaging.providers.extension.HealthCenter;
import io.smallrye.reactive.messaging.providers.extension.MediatorManager;
import io.smallrye.reactive.messaging.providers.extension.ReactiveMessagingExtension;
import io.smallrye.reactive.messaging.providers.impl.ConfiguredChannelFactory;
import io.smallrye.reactive.messaging.providers.impl.ConnectorFactories;
import io.smallrye.reactive.messaging.providers.impl.InternalChannelRegistry;
import io.smallrye.reactive.messaging.providers.wiring.Wiring;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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

    static final String[] CHANNELS = {"optional-key", "leased-no-tx", "later", "later-fail"};

    WeldContainer container;

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
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into incoming_effect (channel, payload) values (?, ?)")) {
                ps.setString(1, channel);
                ps.setString(2, payload);
                ps.executeUpdate();
            }
        }
    }

    /** A record as the Kafka connector delivers it, whose acks and nacks are counted. */
    static final class Delivery {
        final String name;
        volatile int acks;
        volatile int nacks;

        Delivery(String name) {
            this.name = name;
        }
    }

    final List<Delivery> deliveries = new ArrayList<>();

    <T> Message<T> record(String topic, int partition, long offset, String key, String value, T payload) {
        RecordHeaders headers = new RecordHeaders();
        if (key != null) {
            headers.add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
        }
        ConsumerRecord<String, String> record = new ConsumerRecord<>(topic, partition, offset, 0L, TimestampType.CREATE_TIME,
                0, 0, null, value, headers, Optional.empty());
        Delivery d = new Delivery(topic + "/" + partition + "/" + offset);
        deliveries.add(d);
        @SuppressWarnings("unchecked")
        T body = payload == null ? (T) record : payload;
        return Message.of(body, Metadata.of(new IncomingKafkaRecordMetadata<>(record, topic)), () -> {
            rowsAtAck.put(d.name, TestDatabase.H2.count("select count(*) from incoming_effect"));
            d.acks++;
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }, failure -> {
            d.nacks++;
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        });
    }

    void boot(String claim) throws SQLException {
        TestDatabase.H2.reset();
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS incoming_effect");
            s.execute("CREATE TABLE incoming_effect (channel VARCHAR(40) NOT NULL, payload VARCHAR(100) NOT NULL)");
        }
        InMemoryConnector.switchIncomingChannelsToInMemory(CHANNELS);
        JtaInterceptorContract.current = TestDatabase.H2; // its Resources: the H2 pool, enlisted in Narayana's transactions
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.claim", claim);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, Consumers.class,
                        MediatorFactory.class, MediatorManager.class, InternalChannelRegistry.class, ConnectorFactories.class,
                        ConfiguredChannelFactory.class, ChannelProducer.class, ExecutionHolder.class, WorkerPoolRegistry.class,
                        HealthCenter.class, Wiring.class, InMemoryConnector.class)
                .addExtension(new TransactionExtension())
                .addExtension(new ReactiveMessagingExtension())
                .addExtension(new ConfigExtension())
                .initialize();
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
        InMemoryConnector.clear();
        // SmallRye Reactive Messaging reads the global configuration (the in-memory channels' system properties), which
        // registers it for this class loader: released, so that the next test may register its own.
        org.eclipse.microprofile.config.spi.ConfigProviderResolver resolver = org.eclipse.microprofile.config.spi.ConfigProviderResolver.instance();
        resolver.releaseConfig(resolver.getConfig(Thread.currentThread().getContextClassLoader()));
    }

    InMemoryConnector connector() {
        return container.select(InMemoryConnector.class, Any.Literal.INSTANCE).get();
    }

    static long rows(String channel, String payload) {
        return TestDatabase.H2.count("select count(*) from incoming_effect where channel = '" + channel + "' and payload = '" + payload + "'");
    }

    /** Committed rows seen at the moment each record was acknowledged (by the connector's ack). */
    final Map<String, Long> rowsAtAck = new ConcurrentHashMap<>();

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
