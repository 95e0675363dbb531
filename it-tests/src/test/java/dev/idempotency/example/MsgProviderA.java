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

/** One of two consumers of the same notifications: its own namespace, so each handles a notification once. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = MsgResource.NOTIFICATIONS_TOPIC),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Topic"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class MsgProviderA implements MessageListener {

    static final Map<String, AtomicInteger> HANDLED = new ConcurrentHashMap<>();

    @Idempotent(namespace = "provider-a", messageProperty = "notificationId")
    @Override
    public void onMessage(Message message) {
        try {
            HANDLED.computeIfAbsent(message.getStringProperty("notificationId"), k -> new AtomicInteger()).incrementAndGet();
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
