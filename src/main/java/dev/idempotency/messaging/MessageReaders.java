package dev.idempotency.messaging;

import dev.idempotency.config.KeySource;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.ParameterReader;

/**
 * Chooses the reader of an {@code @Idempotent} method that takes a message, once, when the application starts: a
 * message-driven bean's JMS message, a Reactive Messaging consumer's record of Kafka, RabbitMQ or AMQP 1.0. A new broker
 * is one reader class, chosen here.
 */
public final class MessageReaders {

    private MessageReaders() {
    }

    /** The method's reader, or {@code null} when it takes no message (its key is an argument). */
    public static CallReader forMethod(MethodSettings m) {
        if (m.keySource() == KeySource.JMS_MESSAGE) {
            return new JmsReader(m);
        }
        if (m.incoming() == null) {
            return null;
        }
        CallReader keys = m.keySource() == KeySource.RECORD ? forConnector(m) : new ParameterReader(m);
        return new Consumer(keys, m);
    }

    /**
     * The broker's reader, by the connector the channel's configuration names ({@code mp.messaging.incoming.<channel>.connector});
     * a method that takes Kafka's {@code ConsumerRecord} is Kafka's whatever the connector; a connector the library has
     * no reader of, or none named, is read by each message's metadata.
     */
    static CallReader forConnector(MethodSettings m) {
        if (m.incoming().takesRecord()) {
            return new KafkaReader(m);
        }
        String connector = m.incoming().connector();
        if (connector == null) {
            return new ByMetadata(m);
        }
        return switch (connector) {
            case "smallrye-kafka", "liberty-kafka" -> new KafkaReader(m);
            case "smallrye-rabbitmq" -> new RabbitMqReader(m);
            case "smallrye-amqp" -> new AmqpReader(m);
            default -> new ByMetadata(m);
        };
    }
}
