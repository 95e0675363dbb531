package dev.idempotency.config;

/** Where an {@code @Idempotent} method's key comes from. */
public enum KeySource {
    /** The parameter marked {@code @IdempotencyKey}. */
    PARAMETER,
    /** The HTTP header of the JAX-RS request the resource method serves. */
    HTTP_HEADER,
    /** The JMS message id of a message-driven bean's {@code onMessage}. */
    JMS_MESSAGE,
    /**
     * The record an {@code @Incoming} method (MicroProfile Reactive Messaging) receives: the header named by
     * {@code messageProperty}, else the record's coordinates (topic, partition, offset).
     */
    RECORD
}
