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
import io.smallrye.reactive.messaging.providers.IncomingInterceptorDecorator;
import io.smallrye.reactive.messaging.providers.extension.ReactiveMessagingExtension;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQAccept;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailStop;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQReject;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQRequeue;

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
 * A RabbitMQ consumer in a JVM of its own, for {@link RabbitMqConsumerNodesTest}: Weld with the library, Narayana, and
 * SmallRye Reactive Messaging's RabbitMQ connector (AMQP 0.9.1, manual acknowledgements, a prefetch of 10), on
 * PostgreSQL. Its {@code @Incoming("orders")} method is {@code @Idempotent} by the {@code Idempotency-Key} header in its
 * {@code @Transactional} and writes one row of {@code rabbit_effect} per run; a refused message is requeued. Arguments:
 * the queue, this node's name, the claim mode, the lease.
 *
 * <p>It says what it does on its standard output, one line each: {@value #READY}; {@code RECEIVED <key>} when a
 * message reaches the method (before the library); {@code WROTE <key>} after a run's row is written, before its
 * commit; {@code ACKED <key>} and {@code NACKED <key> <reason>} when the message is settled. On its standard input:
 * {@code HOLD <key>} makes the runs of that key wait after their write until {@code RELEASE <key>}; {@code STOP} closes
 * it.
 */
public final class RabbitMqConsumerNode {

    static final String READY = "NODE-READY";

    /**
     * Starts a consumer of the queue in a JVM of its own (this test run's class path), with claims in {@code claim}
     * mode and a lease of 5 s, and waits until it consumes. The queue and the {@code rabbit_effect} table must exist.
     */
    public static ConsumerProcess start(String queue, String name, String claim) throws Exception {
        Process p = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-rabbit-" + name,
                "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-rabbit-" + name,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), RabbitMqConsumerNode.class.getName(), queue, name, claim, "PT5S")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ConsumerProcess node = new ConsumerProcess(name, p);
        try {
            node.await(READY);
        } catch (AssertionError | InterruptedException e) {
            p.destroyForcibly();
            throw e;
        }
        return node;
    }
    static final String CHANNEL = "orders";

    private RabbitMqConsumerNode() {
    }

    public static void main(String[] args) throws Exception {
        String queue = args[0];
        String node = args[1];
        String p = "mp.messaging.incoming." + CHANNEL + ".";
        Map<String, String> channel = new HashMap<>();
        channel.put(p + "connector", RabbitMQConnector.CONNECTOR_NAME);
        channel.put(p + "queue.name", queue);
        channel.put(p + "queue.declare", "false");
        channel.put(p + "exchange.name", "");
        channel.put(p + "exchange.declare", "false");
        channel.put(p + "failure-strategy", "requeue");
        // the prefetch: at most 10 messages delivered and not yet acknowledged (basic.qos); acknowledgements are manual
        channel.put(p + "max-outstanding-messages", "10");
        channel.put(p + "health-enabled", "false");
        channel.put("rabbitmq-host", dev.idempotency.testing.RabbitMq.HOST);
        channel.put("rabbitmq-port", Integer.toString(dev.idempotency.testing.RabbitMq.PORT));
        channel.put("rabbitmq-username", "guest");
        channel.put("rabbitmq-password", "guest");
        channel.forEach(System::setProperty);

        JtaInterceptorContract.current = TestDatabase.POSTGRES;
        Orders.node = node; // before the container starts: it consumes at once
        Map<String, String> config = new HashMap<>(channel);
        config.put("idempotency.claim", args[2]);
        config.put("idempotency.lease", args[3]);
        config.put("idempotency.node-id", node);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        WeldContainer container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, Orders.class,
                        Received.class, RabbitMQConnector.class, RabbitMQRequeue.Factory.class, RabbitMQReject.Factory.class,
                        RabbitMQAccept.Factory.class, RabbitMQFailStop.Factory.class, IncomingInterceptorDecorator.class)
                .addBeanClasses(BrokerConsumers.REACTIVE_MESSAGING)
                .addExtension(new TransactionExtension())
                .addExtension(new ReactiveMessagingExtension())
                .addExtension(new ConfigExtension())
                .initialize();
        NodeCommands.serve(READY, container::close);
    }

    /** The business rows the consumers wrote for this key (PostgreSQL's {@code rabbit_effect}). */
    public static long rows(String key) {
        return TestDatabase.POSTGRES.count("select count(*) from rabbit_effect where k = '" + key.replace("'", "''") + "'");
    }

    static void say(String line) {
        NodeCommands.say(line);
    }

    /** The consumer: one row per run, in the transaction of the claim. */
    @ApplicationScoped
    public static class Orders {
        static volatile String node;

        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Incoming(CHANNEL)
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> consume(Message<String> message) throws SQLException, InterruptedException {
            String key = message.getPayload();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into rabbit_effect (k, node) values (?, ?)")) {
                ps.setString(1, key);
                ps.setString(2, node);
                ps.executeUpdate();
            }
            say("WROTE " + key);
            NodeCommands.holdIfAsked(key); // released by the test, or killed here, before the commit
            return message.ack();
        }
    }

    /** Says which message reached the method, before the library sees it, and how it was settled. */
    @ApplicationScoped
    @Identifier(CHANNEL)
    public static class Received implements IncomingInterceptor {
        @Override
        public Message<?> afterMessageReceive(Message<?> message) {
            say("RECEIVED " + message.getPayload());
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
