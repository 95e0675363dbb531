package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A plain CDI consumer method (fed by MicroProfile Reactive Messaging, Kafka, or a listener of the user's
 * own) de-duplicated through {@code @IdempotencyKey}: at-least-once delivery, exactly-once side effect.
 */
@EnableWeld
class ConsumerMethodTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), SmsSender.class, OrderEventConsumer.class);

    @Inject
    OrderEventConsumer consumer;

    @Inject
    SmsSender sms;

    public record OrderPlaced(String orderId, String phone) {
    }

    /** The side effect: an SMS through an external API, keyed by the event id, so it is sent once. */
    @ApplicationScoped
    public static class SmsSender {
        final AtomicInteger sent = new AtomicInteger();

        @Idempotent(namespace = "sms-provider")
        public void send(@IdempotencyKey String eventId, String phone, String text) {
            sent.incrementAndGet();
        }

        public int sent() {
            return sent.get();
        }
    }

    /** The consumer: sends the SMS, then publishes a follow-up event, which may fail (the broker redelivers). */
    @ApplicationScoped
    public static class OrderEventConsumer {
        @Inject
        SmsSender sms;

        final AtomicInteger followUps = new AtomicInteger();
        volatile int followUpFailures;

        public void onOrderPlaced(String eventId, OrderPlaced event) {
            sms.send(eventId, event.phone(), "Order " + event.orderId() + " placed");
            if (followUpFailures > 0) {
                followUpFailures--;
                throw new IllegalStateException("publishing the follow-up event timed out");
            }
            followUps.incrementAndGet();
        }

        public void failNextFollowUps(int n) {
            followUpFailures = n;
        }

        public int followUps() {
            return followUps.get();
        }
    }

    @Test
    void aRedeliveryAfterALaterFailureDoesNotSendTheSmsAgain() {
        OrderPlaced event = new OrderPlaced("o-1", "+441234");
        consumer.failNextFollowUps(2);
        assertThatThrownBy(() -> consumer.onOrderPlaced("evt-1", event)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> consumer.onOrderPlaced("evt-1", event)).isInstanceOf(IllegalStateException.class);
        consumer.onOrderPlaced("evt-1", event);
        consumer.onOrderPlaced("evt-1", event); // a duplicate delivery after success
        assertThat(sms.sent()).isEqualTo(1);
        assertThat(consumer.followUps()).isEqualTo(2);
    }

    @Test
    void anotherEventSendsAnotherSms() {
        consumer.onOrderPlaced("evt-1", new OrderPlaced("o-1", "+441234"));
        consumer.onOrderPlaced("evt-2", new OrderPlaced("o-2", "+441234"));
        assertThat(sms.sent()).isEqualTo(2);
    }
}
