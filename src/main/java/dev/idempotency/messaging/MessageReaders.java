package dev.idempotency.messaging;

import dev.idempotency.config.KeySource;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.ParameterReader;

/**
 * Chooses the reader of an {@code @Idempotent} method that takes a message, once, when the application starts: a
 * message-driven bean's JMS message, a Reactive Messaging consumer's record. A new kind of message is one reader here.
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
        CallReader keys = m.keySource() == KeySource.RECORD ? new KafkaReader(m) : new ParameterReader(m);
        return new Consumer(keys, m.incoming());
    }
}
