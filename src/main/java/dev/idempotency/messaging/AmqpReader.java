package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;

/**
 * The key and fingerprint of an AMQP 1.0 message that an {@code @Incoming} method of SmallRye's AMQP connector receives
 * (RabbitMQ with its AMQP 1.0 plugin, ActiveMQ Artemis, Qpid, Azure Service Bus): the AMQP 1.0 broker's one class. The
 * key is the message's application property named by {@code messageProperty} when one is named and the message has it,
 * else its {@code message-id}; a message with neither has no key. Read through the connector's metadata by reflection,
 * so that the library needs no AMQP client.
 */
final class AmqpReader extends MessageIdReader {

    static final String METADATA = "io.smallrye.reactive.messaging.amqp.IncomingAmqpMetadata";

    AmqpReader(MethodSettings method) {
        super(method, METADATA, "AMQP 1.0", "application property");
    }

    @Override
    Object property(Object metadata, String name) {
        Object properties = Reflection.call(metadata, "getProperties"); // Vert.x's JsonObject
        return properties == null ? null : Reflection.callWith(properties, "getValue", name);
    }

    @Override
    Object messageId(Object metadata) {
        return Reflection.call(metadata, "getId");
    }

    /** Whether the argument carries this connector's metadata. */
    static boolean reads(Object argument) {
        return Reflection.metadata(argument, METADATA) != null;
    }
}
