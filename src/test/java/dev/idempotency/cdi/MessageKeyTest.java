package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.TextMessage;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The key of a message listener: on {@code onMessage(Message)} the key is the JMS message id, so a redelivery is a
 * duplicate. (The message here is a stand-in built with a dynamic proxy; the message-driven bean in a real
 * broker is tested in the servers.)
 */
@EnableWeld
class MessageKeyTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), SmsListener.class, OrderListener.class);

    @Inject
    SmsListener listener;

    @Inject
    OrderListener orders;

    /** Keyed by a business id in a message property, which survives a re-publish (a new JMS message id). */
    @ApplicationScoped
    public static class OrderListener implements MessageListener {
        final AtomicInteger handled = new AtomicInteger();

        @Idempotent(messageProperty = "orderId")
        @Override
        public void onMessage(Message message) {
            handled.incrementAndGet();
        }

        public int handled() {
            return handled.get();
        }
    }

    @ApplicationScoped
    public static class SmsListener implements MessageListener {
        final AtomicInteger sent = new AtomicInteger();

        @Idempotent
        @Override
        public void onMessage(Message message) {
            sent.incrementAndGet();
        }

        public int sent() {
            return sent.get();
        }
    }

    static TextMessage message(String id, String text) {
        return message(id, text, Map.of());
    }

    static TextMessage message(String id, String text, Map<String, String> properties) {
        return (TextMessage) Proxy.newProxyInstance(MessageKeyTest.class.getClassLoader(), new Class<?>[] {TextMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getJMSMessageID" -> id;
                    case "getText" -> text;
                    case "getStringProperty" -> properties.get((String) args[0]);
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "TextMessage " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aRedeliveryIsProcessedOnce() {
        listener.onMessage(message("ID:1", "send SMS to +4470000"));
        listener.onMessage(message("ID:1", "send SMS to +4470000"));
        listener.onMessage(message("ID:2", "send SMS to +4470000"));
        assertThat(listener.sent()).isEqualTo(2);
    }

    @Test
    void aBusinessIdPropertySurvivesARepublish() {
        orders.onMessage(message("ID:10", "order 42 placed", Map.of("orderId", "42")));
        orders.onMessage(message("ID:11", "order 42 placed", Map.of("orderId", "42")));
        orders.onMessage(message("ID:12", "order 43 placed", Map.of("orderId", "43")));
        assertThat(orders.handled()).isEqualTo(2);
        assertThatThrownBy(() -> orders.onMessage(message("ID:13", "no id")))
                .isInstanceOf(dev.idempotency.IdempotencyKeyMissingException.class)
                .hasMessageContaining("property orderId");
    }

    @Test
    void aReusedMessageIdWithAnotherBodyIsMisuse() {
        listener.onMessage(message("ID:3", "one"));
        assertThatThrownBy(() -> listener.onMessage(message("ID:3", "two"))).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(listener.sent()).isEqualTo(1);
    }
}
