package dev.idempotency.cdi;

import dev.idempotency.testing.RabbitMq;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;

/** What the consumer tests against the machine's RabbitMQ share: the broker, the consumers, and how they stop. */
abstract class BrokerConsumerTest {

    RabbitMq broker;
    BrokerConsumers consumers;

    /** Stops the consumers: their connections close, and the broker takes back what they did not acknowledge. */
    void stopConsumers() {
        if (consumers != null) {
            consumers.close();
            consumers = null;
        }
    }

    @AfterEach
    void stopAll() {
        stopConsumers();
        if (broker != null) {
            broker.close(); // and the test's queues with it
        }
    }

    static long rows(String sql) {
        return TestDatabase.H2.count(sql);
    }

    long ready(String queue) {
        return broker.ready(queue);
    }
}
