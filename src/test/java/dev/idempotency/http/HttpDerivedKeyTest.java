package dev.idempotency.http;

import dev.idempotency.cdi.ConsumerProcess;
import dev.idempotency.cdi.RabbitMqConsumerNode;
import dev.idempotency.testing.RabbitMq;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One key from an HTTP call into the message it sends: a checkout publishes to RabbitMQ, then answers 503 (the key is
 * freed; the message is out); the client retries with the same {@code Idempotency-Key}, and the retry publishes again.
 * A consumer in a JVM of its own ({@code @Idempotent} by the {@code Idempotency-Key} header, on PostgreSQL) runs the
 * order once when the messages carry the key derived from the request's; without it (each message has a message-id
 * of its own) it runs the order twice: the derived key is what makes the difference.
 */
class HttpDerivedKeyTest extends OneServerTest {

    static final String QUEUE = "rabbit-checkout";

    static RabbitMq broker;
    static ConsumerProcess consumer;

    @BeforeAll
    static void start() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        broker = RabbitMq.connect();
        broker.freshQueue(QUEUE);
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS rabbit_effect");
            s.execute("CREATE TABLE rabbit_effect (k VARCHAR(100) NOT NULL, node VARCHAR(40) NOT NULL)");
        }
        TestDatabase.POSTGRES.reset();
        CheckoutResource.broker = broker;
        CheckoutResource.queue = QUEUE;
        consumer = RabbitMqConsumerNode.start(QUEUE, "checkout-consumer", "atomic");
        server = HttpTestServer.onH2(Map.of(), CheckoutResource.class);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (consumer != null) {
            consumer.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        if (broker != null) {
            broker.close();
        }
    }

    int post(String order, String key, boolean fail, boolean derived) throws Exception {
        HttpResponse<String> r = server.send(server.request("checkout?order=" + order + "&fail=" + fail + "&derived=" + derived)
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build());
        return r.statusCode();
    }

    @Test
    void aRetriedRequestSendsAgainAndTheConsumerRunsTheOrderOnce() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(post("order-derived", key, true, true)).as("sent, then failed").isEqualTo(503);
        assertThat(post("order-derived", key, false, true)).as("the retry ran, and sent again").isEqualTo(201);
        assertThat(Counters.executions).hasValue(2);
        broker.awaitSettled(QUEUE, 60);
        assertThat(consumer.awaitLines(l -> l.equals("ACKED order-derived"), 2)).as("both messages acknowledged").isEqualTo(2);
        assertThat(consumer.lines.stream().filter(l -> l.equals("WROTE order-derived"))).as("the order ran once").hasSize(1);
        assertThat(RabbitMqConsumerNode.rows("order-derived")).isEqualTo(1);
        assertThat(consumer.lines).noneMatch(l -> l.startsWith("NACKED"));
    }

    /** The control: the same retry, its messages without the derived key. */
    @Test
    void withoutTheDerivedKeyTheRetrysMessageRunsTheOrderAgain() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(post("order-plain", key, true, false)).isEqualTo(503);
        assertThat(post("order-plain", key, false, false)).isEqualTo(201);
        broker.awaitSettled(QUEUE, 60);
        assertThat(consumer.lines.stream().filter(l -> l.equals("WROTE order-plain"))).as("two messages, two runs").hasSize(2);
        assertThat(RabbitMqConsumerNode.rows("order-plain")).isEqualTo(2);
    }
}
