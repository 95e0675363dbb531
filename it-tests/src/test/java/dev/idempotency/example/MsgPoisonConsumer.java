package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A kept failure: stored as FAILED, rethrown to every redelivery without running the body again. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = MsgResource.POISON_QUEUE),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class MsgPoisonConsumer implements MessageListener {

    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    /** An order that can never be processed. */
    public static class UnprocessableOrderException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public UnprocessableOrderException(String message) {
            super(message);
        }
    }

    @Idempotent(messageProperty = "orderId", keepOn = UnprocessableOrderException.class)
    @Override
    public void onMessage(Message message) {
        try {
            String orderId = message.getStringProperty("orderId");
            RUNS.computeIfAbsent(orderId, k -> new AtomicInteger()).incrementAndGet();
            if (message.getBooleanProperty("poison")) {
                throw new UnprocessableOrderException("order " + orderId + " cannot be processed");
            }
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
