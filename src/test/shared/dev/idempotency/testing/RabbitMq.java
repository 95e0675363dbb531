package dev.idempotency.testing;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The machine's RabbitMQ (127.0.0.1:5672, guest/guest; {@code .ci/run} starts it when it is down), reached with the
 * RabbitMQ Java client: queues of a test's own, messages published with a message-id and headers, and what a queue
 * still holds. Where RabbitMQ does not answer, the tests that need it are skipped with the reason, or fail with
 * {@code IDEMPOTENCY_TEST_REQUIRE_DATABASES=true} (as {@code .ci/run} sets it).
 */
public final class RabbitMq implements AutoCloseable {

    public static final String HOST = System.getenv().getOrDefault("IDEMPOTENCY_TEST_RABBITMQ_HOST", "127.0.0.1");
    public static final int PORT = Integer.parseInt(System.getenv().getOrDefault("IDEMPOTENCY_TEST_RABBITMQ_PORT", "5672"));

    private final Connection connection;
    private final Channel channel;
    /** The queues this test made: deleted when it closes. */
    private final java.util.Set<String> queues = new java.util.LinkedHashSet<>();

    private RabbitMq(Connection connection) throws IOException {
        this.connection = connection;
        this.channel = connection.createChannel();
        channel.confirmSelect();
    }

    /** Connected, or the test skipped (failed where brokers are required). */
    public static RabbitMq connect() {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost(HOST);
        f.setPort(PORT);
        f.setUsername("guest");
        f.setPassword("guest");
        f.setConnectionTimeout(5_000);
        try {
            return new RabbitMq(f.newConnection("idempotency-tests"));
        } catch (IOException | TimeoutException e) {
            String reason = "no RabbitMQ at " + HOST + ":" + PORT + " (" + e + "); start it with rabbitmq-server -detached";
            if (Boolean.getBoolean("idempotency.test.require-databases")
                    || "true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))) {
                throw new AssertionError("Required broker missing: " + reason, e);
            }
            System.out.println("SKIPPED: " + reason);
            Assumptions.abort(reason);
            throw new IllegalStateException(reason);
        }
    }

    /**
     * Skips the test (fails it where brokers are required) unless RabbitMQ speaks AMQP 1.0 on its port (its
     * {@code rabbitmq_amqp1_0} plugin, which {@code .ci/run} enables): asked with AMQP 1.0's SASL protocol header, it
     * answers with the same header; without the plugin, with AMQP 0.9.1's.
     */
    public void assumeAmqp10() {
        byte[] sasl = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
        byte[] answer = new byte[8];
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(HOST, PORT), 5_000);
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(sasl);
            new java.io.DataInputStream(socket.getInputStream()).readFully(answer);
        } catch (IOException e) {
            answer[4] = -1;
        }
        if (java.util.Arrays.equals(sasl, answer)) {
            return;
        }
        String reason = "RabbitMQ at " + HOST + ":" + PORT + " does not speak AMQP 1.0: rabbitmq-plugins enable rabbitmq_amqp1_0";
        if (Boolean.getBoolean("idempotency.test.require-databases")
                || "true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))) {
            throw new AssertionError("Required broker missing: " + reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    /** A durable queue of this name, new and empty. */
    public void freshQueue(String queue) throws IOException {
        queues.add(queue);
        channel.queueDelete(queue);
        channel.queueDeclare(queue, true, false, false, null);
    }

    /**
     * A durable queue of this name, new and empty, whose refused (rejected, not requeued) messages go to a queue of their
     * own, {@code queue + ".dlq"}, through the default exchange.
     */
    public void freshQueueWithDeadLetters(String queue) throws IOException {
        freshQueue(queue + ".dlq");
        queues.add(queue);
        channel.queueDelete(queue);
        channel.queueDeclare(queue, true, false, false, Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", queue + ".dlq"));
    }

    /** Publishes to the queue (through the default exchange), persistent, confirmed by the broker. */
    public void publish(String queue, String body, String messageId, Map<String, Object> headers) throws IOException {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).messageId(messageId)
                .headers(headers == null || headers.isEmpty() ? null : headers).contentType("text/plain").build();
        channel.basicPublish("", queue, props, body.getBytes(StandardCharsets.UTF_8));
        try {
            channel.waitForConfirmsOrDie(10_000);
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("RabbitMQ did not confirm a publish", e);
        }
    }

    /**
     * Messages ready in the queue (not those delivered and not yet acknowledged). Once the consumers' connections are
     * closed, RabbitMQ puts back every message they did not acknowledge: zero then means every message was acknowledged.
     */
    public long ready(String queue) {
        try {
            return channel.queueDeclarePassive(queue).getMessageCount();
        } catch (IOException e) {
            throw new IllegalStateException("RabbitMQ could not count the queue " + queue, e);
        }
    }

    /**
     * Messages of the queue ready or delivered and not yet acknowledged, as the broker counts them
     * ({@code rabbitmqctl list_queues}, on this machine): zero once every message published was acknowledged (or
     * refused without a requeue).
     */
    public long unsettled(String queue) {
        try {
            Process p = new ProcessBuilder("rabbitmqctl", "list_queues", "-q", "name", "messages_ready", "messages_unacknowledged")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("rabbitmqctl list_queues failed: " + out);
            }
            for (String line : out.split("\\R")) {
                String[] f = line.trim().split("\\s+");
                if (f.length == 3 && f[0].equals(queue)) {
                    return Long.parseLong(f[1]) + Long.parseLong(f[2]);
                }
            }
            throw new IllegalStateException("no queue " + queue + " in: " + out);
        } catch (IOException e) {
            throw new IllegalStateException("rabbitmqctl (which counts the messages not yet acknowledged) could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits, polling the broker, until every message of the queue is acknowledged ({@code seconds} at most). */
    public void awaitSettled(String queue, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(seconds);
        for (long left = unsettled(queue); left != 0; left = unsettled(queue)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(left + " messages of " + queue + " not acknowledged within " + seconds + " s");
            }
            Thread.sleep(100); // polling the broker's count
        }
    }

    public void deleteQueue(String queue) {
        try {
            channel.queueDelete(queue);
        } catch (IOException | RuntimeException e) {
            // already gone, or the channel closed: nothing to clean
        }
    }

    /** Deletes the queues this test made, and disconnects. */
    @Override
    public void close() {
        queues.forEach(this::deleteQueue);
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            // closing anyway
        }
    }
}
