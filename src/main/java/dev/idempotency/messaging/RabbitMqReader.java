package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;

import java.util.Map;

/**
 * The key and fingerprint of a RabbitMQ message (AMQP 0.9.1) that an {@code @Incoming} method of SmallRye's RabbitMQ
 * connector receives: the RabbitMQ broker's one class. The key is the message's header named by {@code messageProperty}
 * when one is named and the message has it, else its {@code message-id} property (which the publisher sets; a
 * redelivery keeps both); a message with neither has no key. Never the delivery tag: RabbitMQ numbers deliveries per
 * channel, so a redelivery has another. Read through the connector's metadata by reflection, so that the library needs
 * no RabbitMQ client.
 */
final class RabbitMqReader extends MessageIdReader {

    static final String METADATA = "io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata";

    RabbitMqReader(MethodSettings method) {
        super(method, METADATA, "RabbitMQ", "header");
    }

    @Override
    Object property(Object metadata, String name) {
        return Reflection.call(metadata, "getHeaders") instanceof Map<?, ?> headers ? headers.get(name) : null;
    }

    @Override
    Object messageId(Object metadata) {
        return Reflection.call(metadata, "getMessageId"); // an Optional
    }

    /** Whether the argument carries this connector's metadata. */
    static boolean reads(Object argument) {
        return Reflection.metadata(argument, METADATA) != null;
    }
}
