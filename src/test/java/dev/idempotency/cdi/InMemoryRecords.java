package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import io.smallrye.config.inject.ConfigExtension;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.providers.extension.ReactiveMessagingExtension;

import jakarta.enterprise.inject.Any;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.weld.environment.se.WeldContainer;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * SmallRye Reactive Messaging in Weld with the library, on H2 with Narayana, its in-memory connector standing in for
 * Kafka's: records that carry the Kafka connector's metadata, whose acknowledgements and refusals are counted. Each
 * run writes its row to {@code incoming_effect (channel, payload)}.
 */
final class InMemoryRecords implements AutoCloseable {

    /** A record as the Kafka connector delivers it, whose acks and nacks are counted. */
    static final class Delivery {
        final String name;
        volatile int acks;
        volatile int nacks;

        Delivery(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name + " " + acks + "/" + nacks;
        }
    }

    final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    private final Consumer<Delivery> beforeAck;
    private WeldContainer container;

    InMemoryRecords() {
        this(d -> { });
    }

    /** With {@code beforeAck} called as each record is acknowledged, before it counts. */
    InMemoryRecords(Consumer<Delivery> beforeAck) {
        this.beforeAck = beforeAck;
    }

    /** Starts a container with the consumer bean class, its channels in memory, claims in {@code claim} mode. */
    InMemoryRecords boot(String claim, Class<?> consumers, String... channels) throws SQLException {
        return boot(claim, consumers, channels, new Class<?>[0]);
    }

    /** As above, with more beans of the test's. */
    InMemoryRecords boot(String claim, Class<?> consumers, String[] channels, Class<?>... beans) throws SQLException {
        TestDatabase.H2.reset();
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS incoming_effect");
            s.execute("CREATE TABLE incoming_effect (channel VARCHAR(40) NOT NULL, payload VARCHAR(100) NOT NULL)");
        }
        InMemoryConnector.switchIncomingChannelsToInMemory(channels);
        JtaInterceptorContract.current = TestDatabase.H2; // its Resources: the H2 pool, enlisted in Narayana's transactions
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.claim", claim);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, consumers)
                .addBeanClasses(beans)
                .addBeanClasses(BrokerConsumers.REACTIVE_MESSAGING)
                .addBeanClasses(InMemoryConnector.class)
                .addExtension(new TransactionExtension())
                .addExtension(new ReactiveMessagingExtension())
                .addExtension(new ConfigExtension())
                .initialize();
        return this;
    }

    WeldContainer container() {
        return container;
    }

    InMemoryConnector connector() {
        return container.select(InMemoryConnector.class, Any.Literal.INSTANCE).get();
    }

    /**
     * A record of {@code topic}, at {@code partition} and {@code offset}, with the header {@code Idempotency-Key: key}
     * (none when {@code key} is null) and the value {@code value}; its message's payload is {@code payload}, or the
     * {@code ConsumerRecord} itself when that is null.
     */
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
            beforeAck.accept(d);
            d.acks++;
            return CompletableFuture.completedFuture(null);
        }, failure -> {
            d.nacks++;
            return CompletableFuture.completedFuture(null);
        });
    }

    /** Whether every record was acknowledged or refused. */
    boolean settled() {
        return deliveries.stream().allMatch(d -> d.acks + d.nacks > 0);
    }

    /** A consumer's run: its row, on the consumer's data source (in the transaction the claim joins). */
    static void write(javax.sql.DataSource dataSource, String channel, String payload) throws SQLException {
        try (Connection c = dataSource.getConnection();
             java.sql.PreparedStatement ps = c.prepareStatement("insert into incoming_effect (channel, payload) values (?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, payload);
            ps.executeUpdate();
        }
    }

    static long rows(String channel) {
        return TestDatabase.H2.count("select count(*) from incoming_effect where channel = '" + channel + "'");
    }

    static long rows(String channel, String payload) {
        return TestDatabase.H2.count("select count(*) from incoming_effect where channel = '" + channel + "' and payload = '" + payload + "'");
    }

    @Override
    public void close() {
        if (container != null) {
            container.close();
        }
        InMemoryConnector.clear();
        BrokerConsumers.releaseGlobalConfig(); // the in-memory channels' system properties, read as the global configuration
    }
}
