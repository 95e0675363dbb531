package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeys;
import dev.idempotency.testing.RabbitMq;
import dev.idempotency.testing.TestDatabase;
import io.smallrye.reactive.messaging.providers.extension.EmitterFactoryImpl;
import io.smallrye.reactive.messaging.providers.extension.LegacyEmitterFactoryImpl;
import io.smallrye.reactive.messaging.providers.extension.MutinyEmitterFactoryImpl;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQAccept;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailStop;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQReject;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQRequeue;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.weld.environment.se.WeldContainer;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @Idempotent} consumers of SmallRye's RabbitMQ connector (AMQP 0.9.1) against the machine's RabbitMQ, on H2 with
 * Narayana: the scenario this library grew from (an SMS sent, then the follow-up publish fails, the message is nacked
 * and requeued, and must not send the SMS again), duplicates by header and by message-id, and a message with no key
 * refused rather than acknowledged unseen.
 */
class RabbitMqConsumerTest extends BrokerConsumerTest {

    static final String SMS = "rabbit-sms";
    static final String ORDERS = "rabbit-orders";
    static final String NO_KEY = "rabbit-no-key";
    static final String DERIVED = "rabbit-derived";
    static final String DERIVED_OUT = "rabbit-derived-out";

    WeldContainer container;

    /**
     * The SMS API, behind its own idempotent step (as the guide's messaging page shows it): its record commits as soon as
     * the SMS is sent, outside the message's transaction, so a redelivery after a later failure replays it.
     */
    @ApplicationScoped
    public static class SmsGateway {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Transactional(Transactional.TxType.NOT_SUPPORTED)
        @Idempotent(namespace = "sms-gateway")
        public void send(@IdempotencyKey String messageId, String text) throws SQLException {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into sms_sent (message_id, text) values (?, ?)")) {
                ps.setString(1, messageId);
                ps.setString(2, text);
                ps.executeUpdate();
            }
        }
    }

    /** The follow-up publish: times out the first {@code failures} times for each message. */
    @ApplicationScoped
    public static class FollowUps {
        final Map<String, AtomicInteger> failuresLeft = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> published = new ConcurrentHashMap<>();

        public void failFirst(String messageId, int failures) {
            failuresLeft.put(messageId, new AtomicInteger(failures));
        }

        /** How often each message's follow-up was published. */
        public Map<String, Integer> published() {
            Map<String, Integer> counts = new HashMap<>();
            published.forEach((k, v) -> counts.put(k, v.get()));
            return counts;
        }

        public void publish(String messageId) throws TimeoutException {
            AtomicInteger left = failuresLeft.get(messageId);
            if (left != null && left.getAndDecrement() > 0) {
                throw new TimeoutException("the follow-up publish of " + messageId + " timed out");
            }
            published.computeIfAbsent(messageId, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    /**
     * A checkout whose call sends a message (not part of its transaction), then may fail: the message carries a key
     * derived from the call's, so a retry's second message is a duplicate of the first.
     */
    @ApplicationScoped
    public static class Checkout {
        @Inject
        @Channel(DERIVED_OUT)
        Emitter<String> out;

        final AtomicInteger sent = new AtomicInteger();
        final java.util.Set<String> failAfterTheSend = ConcurrentHashMap.newKeySet();

        public void failAfterTheSend(String orderId) {
            failAfterTheSend.add(orderId);
        }

        /** How many of the messages it sent the connector took. */
        public int sent() {
            return sent.get();
        }

        @Idempotent
        @Transactional
        public String place(@IdempotencyKey String orderId, String order) {
            out.send(Message.of(order, Metadata.of(OutgoingRabbitMQMetadata.builder()
                    .withHeader(IdempotencyKeys.HEADER, IdempotencyKeys.derive("order-placed")).build()), () -> {
                        sent.incrementAndGet();
                        return java.util.concurrent.CompletableFuture.completedFuture(null);
                    }));
            if (failAfterTheSend.remove(orderId)) {
                throw new IllegalStateException("the checkout of " + orderId + " failed after its message was sent");
            }
            return "placed " + orderId;
        }
    }

    @ApplicationScoped
    public static class Consumers {
        @Inject
        SmsGateway sms;

        @Inject
        FollowUps followUps;

        @Inject
        @ForIdempotency
        DataSource dataSource;

        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

        /** How often the consumer ran for each message. */
        public Map<String, Integer> calls() {
            Map<String, Integer> counts = new HashMap<>();
            calls.forEach((k, v) -> counts.put(k, v.get()));
            return counts;
        }

        /** The seed's consumer: the SMS, then the follow-up; a failure of either refuses (nacks) the message. */
        @Incoming(SMS)
        @Idempotent
        @Transactional
        public CompletionStage<Void> sendSms(Message<String> message) throws Exception {
            String id = message.getMetadata(IncomingRabbitMQMetadata.class).flatMap(IncomingRabbitMQMetadata::getMessageId).orElseThrow();
            calls.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
            sms.send(id, message.getPayload());
            followUps.publish(id);
            return message.ack();
        }

        /** Keyed by the header Idempotency-Key where a message has it, else by its message-id. */
        @Incoming(ORDERS)
        @Idempotent(messageProperty = "Idempotency-Key")
        @Transactional
        public CompletionStage<Void> placeOrder(Message<String> message) throws SQLException {
            write(message.getPayload());
            return message.ack();
        }

        private void write(String payload) throws SQLException {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into order_placed (payload) values (?)")) {
                ps.setString(1, payload);
                ps.executeUpdate();
            }
        }

        /** Keyed by default: the Idempotency-Key header that the sender's call derived. */
        @Incoming(DERIVED)
        @Idempotent
        @Transactional
        public CompletionStage<Void> fulfil(Message<String> message) throws SQLException {
            write(message.getPayload());
            return message.ack();
        }

        /** Keyed by the message-id alone. */
        @Incoming(NO_KEY)
        @Idempotent
        @Transactional
        public CompletionStage<Void> byMessageId(Message<String> message) throws SQLException {
            write(message.getPayload());
            return message.ack();
        }
    }

    @BeforeEach
    void tables() throws Exception {
        broker = RabbitMq.connect();
        TestDatabase.H2.reset();
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS sms_sent");
            s.execute("CREATE TABLE sms_sent (message_id VARCHAR(100) NOT NULL, text VARCHAR(200) NOT NULL)");
            s.execute("DROP TABLE IF EXISTS order_placed");
            s.execute("CREATE TABLE order_placed (payload VARCHAR(200) NOT NULL)");
        }
        broker.freshQueue(SMS);
        broker.freshQueue(ORDERS);
        broker.freshQueueWithDeadLetters(NO_KEY);
        broker.freshQueue(DERIVED);
    }



    /**
     * The consumers on RabbitMQ's queues, claims in {@code claim} mode, the library's configuration beside: a refused
     * message is requeued, but on the no-key channel, where it is rejected (to its dead-letter queue).
     */
    void boot(String claim, Map<String, String> more) {
        Map<String, String> channels = new HashMap<>();
        for (String channel : List.of(SMS, ORDERS, NO_KEY, DERIVED)) {
            String p = "mp.messaging.incoming." + channel + ".";
            channels.put(p + "connector", "smallrye-rabbitmq");
            channels.put(p + "queue.name", channel);
            channels.put(p + "queue.declare", "false");
            channels.put(p + "exchange.name", "");
            channels.put(p + "exchange.declare", "false");
            channels.put(p + "failure-strategy", channel.equals(NO_KEY) ? "reject" : "requeue");
            channels.put(p + "max-outstanding-messages", "10");
        }
        String out = "mp.messaging.outgoing." + DERIVED_OUT + ".";
        channels.put(out + "connector", "smallrye-rabbitmq");
        channels.put(out + "exchange.name", "\"\""); // the default exchange, as the connector spells it (an empty value is no value)
        channels.put(out + "exchange.declare", "false");
        channels.put(out + "publish-confirms", "true"); // a message is sent once the broker has it
        channels.put(out + "default-routing-key", DERIVED);
        channels.put("rabbitmq-host", RabbitMq.HOST);
        channels.put("rabbitmq-port", Integer.toString(RabbitMq.PORT));
        channels.put("rabbitmq-username", "guest");
        channels.put("rabbitmq-password", "guest");
        consumers = new BrokerConsumers(claim, channels, more, Consumers.class, SmsGateway.class, FollowUps.class,
                Checkout.class, EmitterFactoryImpl.class, MutinyEmitterFactoryImpl.class, LegacyEmitterFactoryImpl.class,
                RabbitMQConnector.class, RabbitMQRequeue.Factory.class, RabbitMQReject.Factory.class, RabbitMQAccept.Factory.class,
                RabbitMQFailStop.Factory.class);
        container = consumers.container();
    }


    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void anSmsIsSentOnceThoughItsFollowUpFailsAndTheMessageIsRequeued(String claim) throws Exception {
        boot(claim, Map.of());
        Consumers consumers = container.select(Consumers.class).get();
        FollowUps followUps = container.select(FollowUps.class).get();
        for (int i = 0; i < 5; i++) {
            followUps.failFirst("sms-" + i, i % 3); // 0, 1 or 2 failed follow-ups before one goes through
        }
        for (int i = 0; i < 5; i++) {
            broker.publish(SMS, "Your code is " + (1000 + i), "sms-" + i, Map.of());
        }
        BrokerConsumers.await("every message acknowledged", () -> followUps.published().size() == 5 && broker.unsettled(SMS) == 0,
                () -> followUps.published() + ", calls " + consumers.calls() + ", unsettled " + broker.unsettled(SMS));
        Map<String, Integer> calls = consumers.calls();
        Map<String, Integer> published = followUps.published();
        for (int i = 0; i < 5; i++) {
            String id = "sms-" + i;
            assertThat(calls.get(id)).as(id + " delivered once, then once more per failed follow-up").isEqualTo(1 + i % 3);
            assertThat(rows("select count(*) from sms_sent where message_id = '" + id + "'")).as(id + ": one SMS, however often it came").isEqualTo(1);
            assertThat(published.get(id)).as(id + ": one follow-up").isEqualTo(1);
        }
        stopConsumers(); // what the consumer did not acknowledge, RabbitMQ would put back in the queue
        assertThat(broker.ready(SMS)).as("every message acknowledged in the end").isZero();
    }

    /**
     * The same consumer with the SMS gateway's protection switched off (as without the library): the SMS goes out again
     * on each redelivery. This is the bug the test above proves gone, shown to be real on this broker.
     */
    @Test
    void withoutTheLibraryTheSmsGoesOutAgainOnEachRedelivery() throws Exception {
        boot("atomic", Map.of(SmsGateway.class.getName() + "/send/Idempotent/enabled", "false"));
        FollowUps followUps = container.select(FollowUps.class).get();
        followUps.failFirst("sms-x", 2);
        broker.publish(SMS, "Your code is 4242", "sms-x", Map.of());
        BrokerConsumers.await("the follow-up published and the message acknowledged", () -> followUps.published().containsKey("sms-x")
                && broker.unsettled(SMS) == 0, () -> followUps.published().toString());
        assertThat(rows("select count(*) from sms_sent where message_id = 'sms-x'")).as("three deliveries, three SMS").isEqualTo(3);
    }

    @ParameterizedTest(name = "claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void duplicatesByHeaderOrByMessageIdRunOnce(String claim) throws Exception {
        boot(claim, Map.of());
        // 12 keys: 6 by header (a re-publish keeps its business key, not its message-id), 6 by message-id alone; each
        // published three times.
        int published = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 6; i++) {
                broker.publish(ORDERS, "by-header-" + i, "m-" + round + "-" + i, Map.of("Idempotency-Key", "order-" + i));
                broker.publish(ORDERS, "by-id-" + i, "id-" + i, Map.of());
                published += 2;
            }
        }
        int total = published;
        BrokerConsumers.await("every message acknowledged", () -> broker.unsettled(ORDERS) == 0,
                () -> "unsettled " + broker.unsettled(ORDERS) + ", rows " + rows("select count(*) from order_placed") + " of " + total + " messages");
        stopConsumers();
        assertThat(broker.ready(ORDERS)).as("every message acknowledged").isZero();
        assertThat(rows("select count(*) from order_placed")).as("one row per key").isEqualTo(12);
        for (int i = 0; i < 6; i++) {
            assertThat(rows("select count(*) from order_placed where payload = 'by-header-" + i + "'")).isEqualTo(1);
            assertThat(rows("select count(*) from order_placed where payload = 'by-id-" + i + "'")).isEqualTo(1);
        }
    }

    /**
     * A message with no message-id has no key: refused (nacked, and so rejected to its dead-letter queue), never
     * acknowledged unseen and never run; one with a message-id runs.
     */
    @Test
    void aMessageWithoutAKeyIsRefusedNeverAcknowledgedUnseen() throws Exception {
        boot("atomic", Map.of());
        broker.publish(NO_KEY, "anonymous", null, Map.of());
        broker.publish(NO_KEY, "identified", "id-1", Map.of());
        BrokerConsumers.await("both settled", () -> broker.unsettled(NO_KEY) == 0 && ready(NO_KEY + ".dlq") == 1,
                () -> "unsettled " + broker.unsettled(NO_KEY) + ", dead letters " + ready(NO_KEY + ".dlq") + ", rows " + rows("select count(*) from order_placed"));
        stopConsumers();
        assertThat(rows("select count(*) from order_placed where payload = 'anonymous'")).as("never run").isZero();
        assertThat(rows("select count(*) from order_placed where payload = 'identified'")).isEqualTo(1);
        assertThat(broker.ready(NO_KEY + ".dlq")).as("the message without a key refused, to the dead-letter queue").isEqualTo(1);
        assertThat(broker.ready(NO_KEY)).isZero();
    }

    /**
     * One key end to end: a call sends a message with a key derived from its own, then fails after the send (its
     * transaction rolls back, the message is out); the retry sends again. The consumer, keyed by default by that
     * header, runs the order once and acknowledges both messages. Another call's message (another key) runs too.
     */
    @ParameterizedTest(name = "the caller's claim {0}")
    @ValueSource(strings = {"atomic", "optimistic", "leased"})
    void aRetriedCallSendsAgainAndTheConsumerRunsItsMessageOnce(String claim) throws Exception {
        boot(claim, Map.of());
        Checkout checkout = container.select(Checkout.class).get();
        checkout.failAfterTheSend("o-1");
        assertThatThrownBy(() -> checkout.place("o-1", "order-1")).isInstanceOf(IllegalStateException.class);
        assertThat(checkout.place("o-1", "order-1")).as("the retry ran").isEqualTo("placed o-1");
        assertThat(checkout.place("o-1", "order-1")).as("a third call is a replay: it sends nothing").isEqualTo("placed o-1");
        assertThat(checkout.place("o-2", "order-2")).isEqualTo("placed o-2");
        BrokerConsumers.await("three messages sent and every one acknowledged", () -> checkout.sent() == 3
                        && broker.unsettled(DERIVED) == 0 && rows("select count(*) from order_placed") == 2,
                () -> "sent " + checkout.sent() + ", unsettled " + broker.unsettled(DERIVED) + ", rows " + rows("select count(*) from order_placed"));
        stopConsumers();
        assertThat(broker.ready(DERIVED)).as("every message acknowledged").isZero();
        assertThat(rows("select count(*) from order_placed where payload = 'order-1'")).as("the retried call's order ran once").isEqualTo(1);
        assertThat(rows("select count(*) from order_placed where payload = 'order-2'")).isEqualTo(1);
    }
}
