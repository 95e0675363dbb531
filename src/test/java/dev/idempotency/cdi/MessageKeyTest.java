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
 * SPEC I1 for listeners: on {@code onMessage(Message)} the key is the JMS message id, so a redelivery is a
 * duplicate. (The message here is a stand-in built with a dynamic proxy; the message-driven bean in a real
 * broker is tested in the servers.)
 */
@EnableWeld
class MessageKeyTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), SmsListener.class);

    @Inject
    SmsListener listener;

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
        return (TextMessage) Proxy.newProxyInstance(MessageKeyTest.class.getClassLoader(), new Class<?>[] {TextMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getJMSMessageID" -> id;
                    case "getText" -> text;
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
    void aReusedMessageIdWithAnotherBodyIsMisuse() {
        listener.onMessage(message("ID:3", "one"));
        assertThatThrownBy(() -> listener.onMessage(message("ID:3", "two"))).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(listener.sent()).isEqualTo(1);
    }
}
