package dev.idempotency.messaging;

import dev.idempotency.IdempotencyKeys;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.JsonCodec;

/**
 * The reader of a broker whose messages carry a {@code message-id} and named properties (RabbitMQ's headers, AMQP 1.0's
 * application properties), read from the connector's metadata: the property named by {@code messageProperty} (by
 * default {@code Idempotency-Derived-Key}, where a sender puts a derived key) when the message has it, else the message-id; a
 * message with neither has no key. A broker of this kind is one subclass: its
 * metadata type, and how a property and the id are read from it.
 */
abstract class MessageIdReader implements CallReader {

    private final MethodSettings method;
    private final String metadataType;
    /** What the broker calls what it carries ("RabbitMQ", "AMQP 1.0") and its named properties ("header"). */
    private final String broker;
    private final String property;

    MessageIdReader(MethodSettings method, String metadataType, String broker, String property) {
        this.method = method;
        this.metadataType = metadataType;
        this.broker = broker;
        this.property = property;
    }

    /** The value of the message's property of this name, or {@code null}. */
    abstract Object property(Object metadata, String name);

    /** The message's id, or {@code null}. */
    abstract Object messageId(Object metadata);

    @Override
    public Object key(Object[] args) {
        Object metadata = Reflection.metadata(args[0], metadataType);
        if (metadata == null) {
            return null;
        }
        String name = method.messageProperty();
        String value = Reflection.text(property(metadata, name != null ? name : IdempotencyKeys.HEADER));
        if (value != null && !value.isBlank()) {
            return value;
        }
        return Reflection.text(Reflection.present(messageId(metadata)));
    }

    @Override
    public String noKey(Object[] args) {
        if (Reflection.metadata(args[0], metadataType) == null) {
            return "the message carries no " + broker + " metadata (its " + property + "s and message-id)";
        }
        return "the message has no " + property + " " + (method.messageProperty() == null ? IdempotencyKeys.HEADER : method.messageProperty())
                + " and no message-id (set one when publishing, or name the " + property + " that holds the key with messageProperty)";
    }

    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        return Payloads.fingerprint(method.namespace(), args[0], codec);
    }
}
