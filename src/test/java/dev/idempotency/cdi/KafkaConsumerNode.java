package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import io.smallrye.common.annotation.Identifier;
import io.smallrye.config.inject.ConfigExtension;
import io.smallrye.reactive.messaging.IncomingInterceptor;
import io.smallrye.reactive.messaging.kafka.KafkaCDIEvents;
import io.smallrye.reactive.messaging.kafka.KafkaConnector;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.kafka.commit.KafkaThrottledLatestProcessedCommit;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailStop;
import io.smallrye.reactive.messaging.kafka.impl.KafkaClientServiceImpl;
import io.smallrye.reactive.messaging.providers.IncomingInterceptorDecorator;
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
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.weld.environment.se.WeldContainer;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A Kafka consumer in a JVM of its own, for {@link KafkaConsumerNodesTest}: Weld with the library, Narayana, and
 * SmallRye Reactive Messaging's Kafka connector, on PostgreSQL. Its {@code @Incoming("orders")} method is
 * {@code @Idempotent} by the {@code Idempotency-Key} header (atomic claims in its {@code @Transactional}) and writes one
 * row of {@code kafka_effect} per run. Arguments: bootstrap servers, topic, group, this node's name, the commit interval and
 * {@code max.poll.interval.ms} in milliseconds.
 *
 * <p>It says what it does on its standard output, one line each: {@value #READY}; {@code RECEIVED <key>} when
 * a record reaches the method (before the library); {@code WROTE <key>} after a run's row is written, before its
 * commit. On its standard input: {@code HOLD <key>} makes the runs of that key wait after their write until
 * {@code RELEASE <key>}; {@code STOP} closes it.
 */
public final class KafkaConsumerNode {

    static final String READY = "NODE-READY";
    static final String CHANNEL = "orders";

    private KafkaConsumerNode() {
    }

    public static void main(String[] args) throws Exception {
        String node = args[3];
        String p = "mp.messaging.incoming." + CHANNEL + ".";
        System.setProperty(p + "connector", KafkaConnector.CONNECTOR_NAME);
        System.setProperty(p + "bootstrap.servers", args[0]);
        System.setProperty(p + "topic", args[1]);
        System.setProperty(p + "group.id", args[2]);
        System.setProperty(p + "client.id", node);
        System.setProperty(p + "auto.offset.reset", "earliest");
        System.setProperty(p + "key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        System.setProperty(p + "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        // a member that leaves is noticed within seconds, and a new one joins at once
        System.setProperty(p + "session.timeout.ms", "6000");
        System.setProperty(p + "heartbeat.interval.ms", "1000");
        System.setProperty(p + "max.poll.interval.ms", args[5]);
        System.setProperty(p + "max.poll.records", "20");
        System.setProperty(p + "health-enabled", "false");
        // how often the offsets of the records acknowledged in order are committed (SmallRye's throttled strategy)
        System.setProperty(p + "auto.commit.interval.ms", args[4]);

        JtaInterceptorContract.current = TestDatabase.POSTGRES;
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.claim", "atomic");
        config.put("idempotency.node-id", node);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        WeldContainer container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, Orders.class,
                        Received.class, MediatorFactory.class, MediatorManager.class, InternalChannelRegistry.class,
                        ConnectorFactories.class, ConfiguredChannelFactory.class, ChannelProducer.class, ExecutionHolder.class,
                        WorkerPoolRegistry.class, HealthCenter.class, Wiring.class, KafkaConnector.class, KafkaCDIEvents.class,
                        KafkaClientServiceImpl.class, KafkaThrottledLatestProcessedCommit.Factory.class,
                        KafkaFailStop.Factory.class, IncomingInterceptorDecorator.class)
                .addExtension(new TransactionExtension())
                .addExtension(new ReactiveMessagingExtension())
                .addExtension(new ConfigExtension())
                .initialize();
        NodeCommands.serve(READY, container::close);
    }

    static void say(String line) {
        NodeCommands.say(line);
    }

    /** The consumer: one row per run, in the transaction of the claim. */
    @ApplicationScoped
    public static class Orders {

        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Incoming(CHANNEL)
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> consume(Message<String> message) throws SQLException, InterruptedException {
            String key = message.getPayload();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into kafka_effect (k, node) values (?, ?)")) {
                ps.setString(1, key);
                ps.setString(2, System.getProperty("mp.messaging.incoming." + CHANNEL + ".client.id"));
                ps.executeUpdate();
            }
            say("WROTE " + key);
            NodeCommands.holdIfAsked(key); // released by the test, or killed here, before the commit
            return message.ack();
        }
    }

    /** Says which record reached the method, before the library sees it. */
    @ApplicationScoped
    @Identifier(CHANNEL)
    public static class Received implements IncomingInterceptor {
        @Override
        public Message<?> afterMessageReceive(Message<?> message) {
            String where = message.getMetadata(IncomingKafkaRecordMetadata.class)
                    .map(m -> m.getPartition() + "/" + m.getOffset()).orElse("?");
            say("RECEIVED " + message.getPayload() + " " + where);
            return message;
        }

        @Override
        public void onMessageAck(Message<?> message) {
            say("ACKED " + message.getPayload());
        }

        @Override
        public void onMessageNack(Message<?> message, Throwable failure) {
            say("NACKED " + message.getPayload() + " " + failure);
        }
    }
}
