package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * Settings belong to (bean class, method): one inherited {@code @Idempotent} method on two bean classes, each
 * given its own namespace by configuration ({@code <fqcn>/<method>/Idempotent/namespace}), is two
 * operations. Keyed by the method alone, both beans got the namespace of whichever was resolved last, and the
 * second bean replayed the first one's result.
 */
class InheritedMethodTest {

    static final AtomicInteger SENT = new AtomicInteger();

    public abstract static class Sender {
        @Idempotent
        public String send(@IdempotencyKey String key) {
            return channel() + " sent " + SENT.incrementAndGet();
        }

        abstract String channel();
    }

    @ApplicationScoped
    public static class SmsSender extends Sender {
        @Override
        String channel() {
            return "SmsSender";
        }
    }

    @ApplicationScoped
    public static class MailSender extends Sender {
        @Override
        String channel() {
            return "MailSender";
        }
    }

    @Test
    void anInheritedMethodHasTheSettingsOfEachBeanClass() {
        Map<String, String> config = Map.of(
                "idempotency.store", "memory",
                SmsSender.class.getName() + "/send/Idempotent/namespace", "sms",
                MailSender.class.getName() + "/send/Idempotent/namespace", "mail");
        try (WeldContainer c = IdempotencyWeld.weld(config, SmsSender.class, MailSender.class).initialize()) {
            SmsSender sms = c.select(SmsSender.class).get();
            MailSender mail = c.select(MailSender.class).get();
            String smsFirst = sms.send("k");
            String mailFirst = mail.send("k");
            assertThat(smsFirst).isEqualTo("SmsSender sent 1");
            assertThat(mailFirst).as("another namespace: another operation").isEqualTo("MailSender sent 2");
            assertThat(sms.send("k")).isEqualTo(smsFirst);
            assertThat(mail.send("k")).isEqualTo(mailFirst);
            assertThat(SENT).hasValue(2);
            var store = c.select(IdempotencyRuntime.class).get().engine().store();
            assertThat(store.find(new ScopedKey("sms", "anonymous", "k"))).isPresent();
            assertThat(store.find(new ScopedKey("mail", "anonymous", "k"))).isPresent();
        }
    }
}
