package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.TextMessage;

import java.util.concurrent.atomic.AtomicInteger;

/** Sends an SMS, then publishes a follow-up event; the container redelivers when that fails. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = MsgResource.SMS_QUEUE),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class MsgSmsConsumer implements MessageListener {

    static final AtomicInteger RUNS = new AtomicInteger();

    @Inject
    MsgSmsGateway sms;

    @Inject
    MsgFollowUps followUps;

    @Idempotent
    @Override
    public void onMessage(Message message) {
        RUNS.incrementAndGet();
        try {
            sms.send(message.getJMSMessageID(), ((TextMessage) message).getText());
            followUps.publish(message.getJMSMessageID());
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
