package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.RabbitMq;
import dev.idempotency.testing.TestDatabase;
import io.smallrye.reactive.messaging.amqp.AmqpConnector;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} consumers of SmallRye's AMQP 1.0 connector, against the machine's RabbitMQ through its AMQP 1.0
 * plugin ({@code .ci/run} enables it), on H2 with Narayana: messages published three times with one message-id run
 * once and are all acknowledged, in each claim mode; a message with no message-id is refused (to the queue's
 * dead-letter queue), never run and never acknowledged unseen.
 */
class AmqpConsumerTest extends BrokerConsumerTest {

    static final String ORDERS = "amqp-orders";
    static final String NO_KEY = "amqp-no-key";


    @ApplicationScoped
    public static class Consumers {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Incoming(ORDERS)
        @Idempotent
        @Transactional
        public CompletionStage<Void> placeOrder(Message<byte[]> message) throws SQLException {
            write(new String(message.getPayload(), java.nio.charset.StandardCharsets.UTF_8)); // an AMQP 0.9.1 body: a data section
            return message.ack();
        }

        @Incoming(NO_KEY)
        @Idempotent
        @Transactional
        public CompletionStage<Void> noKey(Message<byte[]> message) throws SQLException {
            write(new String(message.getPayload(), java.nio.charset.StandardCharsets.UTF_8));
            return message.ack();
        }

        private void write(String payload) throws SQLException {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into order_placed (payload) values (?)")) {
                ps.setString(1, payload);
                ps.executeUpdate();
            }
        }
    }

    @BeforeEach
    void queues() throws Exception {
        broker = RabbitMq.connect();
        broker.assumeAmqp10();
        TestDatabase.H2.reset();
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS order_placed");
            s.execute("CREATE TABLE order_placed (payload VARCHAR(200) NOT NULL)");
        }
        broker.freshQueue(ORDERS);
        broker.freshQueueWithDeadLetters(NO_KEY);
    }



    /** The consumers on the queues through AMQP 1.0 (a refused message released to its queue, or rejected on the no-key one). */
    void boot(String claim) {
        Map<String, String> channels = new HashMap<>();
        for (String channel : List.of(ORDERS, NO_KEY)) {
            String p = "mp.messaging.incoming." + channel + ".";
            channels.put(p + "connector", "smallrye-amqp");
            channels.put(p + "address", "/amq/queue/" + channel);
            channels.put(p + "failure-strategy", channel.equals(NO_KEY) ? "reject" : "release");
        }
        channels.put("amqp-host", RabbitMq.HOST);
        channels.put("amqp-port", Integer.toString(RabbitMq.PORT));
        channels.put("amqp-username", "guest");
        channels.put("amqp-password", "guest");
        consumers = new BrokerConsumers(claim, channels, Map.of(), Consumers.class, AmqpConnector.class);
    }


    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void messagesWithOneMessageIdRunOnceAndAreAllAcknowledged(String claim) throws Exception {
        boot(claim);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 8; i++) {
                broker.publish(ORDERS, "order-" + i, "order-" + i, Map.of());
            }
        }
        BrokerConsumers.await("every message acknowledged", () -> broker.unsettled(ORDERS) == 0,
                () -> "unsettled " + broker.unsettled(ORDERS) + ", rows " + rows("select count(*) from order_placed"));
        stopConsumers(); // what the consumer did not acknowledge, RabbitMQ puts back in the queue
        assertThat(broker.ready(ORDERS)).as("every message acknowledged").isZero();
        assertThat(rows("select count(*) from order_placed")).as("one row per message-id").isEqualTo(8);
    }

    @Test
    void aMessageWithoutAMessageIdIsRefusedNeverAcknowledgedUnseen() throws Exception {
        boot("atomic");
        broker.publish(NO_KEY, "anonymous", null, Map.of());
        broker.publish(NO_KEY, "identified", "id-1", Map.of());
        BrokerConsumers.await("both settled", () -> broker.unsettled(NO_KEY) == 0 && ready(NO_KEY + ".dlq") == 1,
                () -> "unsettled " + broker.unsettled(NO_KEY) + ", dead letters " + ready(NO_KEY + ".dlq") + ", rows " + rows("select count(*) from order_placed"));
        stopConsumers();
        assertThat(rows("select count(*) from order_placed where payload = 'anonymous'")).as("never run").isZero();
        assertThat(broker.ready(NO_KEY + ".dlq")).as("refused, to the dead-letter queue").isEqualTo(1);
    }

    /**
     * A sender that derived its message's key (two sends of a retried call: two message-ids, one derived key in the
     * application property {@code Idempotency-Derived-Key}), published over AMQP 1.0: the consumer, keyed by default,
     * runs it once and acknowledges both. (RabbitMQ's AMQP 1.0 plugin does not hand an AMQP 0.9.1 publisher's headers to
     * AMQP 1.0 consumers: such a publisher puts the derived key in the message-id.)
     */
    @Test
    void twoSendsWithOneDerivedKeyRunOnce() throws Exception {
        boot("atomic");
        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            io.vertx.amqp.AmqpClient client = io.vertx.amqp.AmqpClient.create(vertx, new io.vertx.amqp.AmqpClientOptions()
                    .setHost(RabbitMq.HOST).setPort(RabbitMq.PORT).setUsername("guest").setPassword("guest"));
            io.vertx.amqp.AmqpConnection connection = client.connect().toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
            io.vertx.amqp.AmqpSender sender = connection.createSender("/amq/queue/" + ORDERS).toCompletionStage().toCompletableFuture()
                    .get(30, java.util.concurrent.TimeUnit.SECONDS);
            for (String send : List.of("send-1", "send-2")) {
                sender.sendWithAck(io.vertx.amqp.AmqpMessage.create().id(send)
                        .applicationProperties(new io.vertx.core.json.JsonObject().put(dev.idempotency.IdempotencyKeys.HEADER, "derived-1"))
                        .withBufferAsBody(io.vertx.core.buffer.Buffer.buffer("derived-order"))
                        .build()).toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            connection.close();
        } finally {
            vertx.close();
        }
        BrokerConsumers.await("both acknowledged", () -> broker.unsettled(ORDERS) == 0 && rows("select count(*) from order_placed") == 1,
                () -> "unsettled " + broker.unsettled(ORDERS) + ", rows " + rows("select count(*) from order_placed"));
        stopConsumers();
        assertThat(broker.ready(ORDERS)).as("both acknowledged").isZero();
        assertThat(rows("select count(*) from order_placed where payload = 'derived-order'")).as("run once").isEqualTo(1);
    }
}
