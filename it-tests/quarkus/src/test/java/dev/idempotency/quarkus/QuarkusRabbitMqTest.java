package dev.idempotency.quarkus;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import io.quarkus.test.junit.QuarkusTest;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The library's RabbitMQ consumer door on Quarkus: {@code @Idempotent} on an {@code @Incoming} method of
 * {@code quarkus-messaging-rabbitmq}, against the machine's RabbitMQ ({@code .ci/run} starts it). 12 keys, each
 * published three times with its message-id (a redelivery, or a publisher's retry that keeps it), shuffled: each key
 * charged once, every message acknowledged.
 */
@QuarkusTest
class QuarkusRabbitMqTest {

    static final String QUEUE = "quarkus-orders";

    @Inject
    Ledger ledger;

    @Test
    void duplicatesByMessageIdChargeOnceAndAreAllAcknowledged() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> keys = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String key = "rabbit-" + run + "-" + i;
            keys.add(key);
            for (int copy = 0; copy < 3; copy++) {
                messages.add(key);
            }
        }
        Collections.shuffle(messages, new Random(62));
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(5672);
        factory.setUsername("guest");
        factory.setPassword("guest");
        try (Connection connection = factory.newConnection("quarkus-test"); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (String key : messages) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).messageId(key)
                        .contentType("text/plain").build();
                channel.basicPublish("", QUEUE, props, (key + "|100").getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(10_000);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(keys.stream().allMatch(k -> ledger.rows(k) == 1) && unsettled() == 0)) {
                assertTrue(System.nanoTime() < deadline, "every key charged and every message acknowledged within 60 s; unsettled "
                        + unsettled());
                Thread.sleep(100); // polling the ledger and the broker
            }
        }
        for (String key : keys) {
            assertEquals(1, ledger.rows(key), key + ": one charge");
            assertEquals(1, ledger.runs(key), key + ": run once, however often it came");
        }
    }

    /** Messages of the queue ready or delivered and not yet acknowledged, as the broker counts them. */
    static long unsettled() throws Exception {
        Process p = new ProcessBuilder("rabbitmqctl", "list_queues", "-q", "name", "messages_ready", "messages_unacknowledged")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "rabbitmqctl list_queues: " + out);
        for (String line : out.split("\\R")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && f[0].equals(QUEUE)) {
                return Long.parseLong(f[1]) + Long.parseLong(f[2]);
            }
        }
        throw new AssertionError("no queue " + QUEUE + " in: " + out);
    }
}
