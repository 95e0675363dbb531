package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.JsonCodec;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;

/**
 * The key and fingerprint of a JMS message (for a message-driven bean's {@code onMessage}): the key
 * is the JMS message id, which a redelivery keeps, or a configured string property (a business id, which a
 * re-publish keeps too); the fingerprint is the message type and body (text or bytes). Loaded only for such
 * methods, so that no JMS class is needed elsewhere. The container acknowledges the message with its transaction, so
 * the method's return value is stored as any method's.
 */
record JmsReader(MethodSettings method) implements CallReader {

    @Override
    public Object key(Object[] args) {
        Object message = args[0];
        String property = method.messageProperty();
        try {
            return property == null ? ((Message) message).getJMSMessageID() : ((Message) message).getStringProperty(property);
        } catch (JMSException e) {
            throw new IdempotencyException("Could not read the JMS message id", e);
        }
    }

    @Override
    public String noKey(Object[] args) {
        return "the message has no " + (method.messageProperty() == null ? "JMS message id" : "property " + method.messageProperty());
    }

    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        Object message = args[0];
        Fingerprint f = Fingerprint.start().add(method.namespace());
        try {
            if (message instanceof TextMessage text) {
                f.add("text").add(text.getText());
            } else if (message instanceof BytesMessage bytes) {
                byte[] body = new byte[(int) bytes.getBodyLength()];
                bytes.readBytes(body);
                bytes.reset();
                f.add("bytes").add(body);
            } else {
                f.add(message == null ? "null" : message.getClass().getSimpleName());
            }
        } catch (JMSException e) {
            throw new IdempotencyException("Could not read the JMS message body", e);
        }
        return f.hex();
    }
}
