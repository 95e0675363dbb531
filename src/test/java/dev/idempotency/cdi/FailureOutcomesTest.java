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

/** An exception releases the key by default; keepOn keeps it (rethrown on replay); releaseOn overrides. */
@EnableWeld
class FailureOutcomesTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), Payments.class);

    @Inject
    Payments payments;

    public static class PaymentException extends Exception {
        private static final long serialVersionUID = 1L;

        public PaymentException(String message) {
            super(message);
        }
    }

    public static class CardDeclinedException extends PaymentException {
        private static final long serialVersionUID = 1L;

        public CardDeclinedException(String message) {
            super(message);
        }
    }

    public static class GatewayTimeoutException extends PaymentException {
        private static final long serialVersionUID = 1L;

        public GatewayTimeoutException(String message) {
            super(message);
        }
    }

    @ApplicationScoped
    public static class Payments {
        final AtomicInteger attempts = new AtomicInteger();
        volatile Exception next;

        @Idempotent(keepOn = PaymentException.class, releaseOn = GatewayTimeoutException.class)
        public String charge(@IdempotencyKey String key, long amount) throws PaymentException {
            attempts.incrementAndGet();
            Exception e = next;
            next = null;
            if (e instanceof PaymentException p) {
                throw p;
            }
            if (e instanceof RuntimeException r) {
                throw r;
            }
            return "charged " + amount;
        }

        public void failNextWith(Exception e) {
            next = e;
        }

        public int attempts() {
            return attempts.get();
        }
    }

    @Test
    void anUnlistedExceptionReleasesTheKeySoTheRetryRuns() throws Exception {
        payments.failNextWith(new IllegalStateException("database hiccup"));
        assertThatThrownBy(() -> payments.charge("p-1", 100)).isInstanceOf(IllegalStateException.class);
        assertThat(payments.charge("p-1", 100)).isEqualTo("charged 100");
        assertThat(payments.charge("p-1", 100)).isEqualTo("charged 100");
        assertThat(payments.attempts()).isEqualTo(2);
    }

    @Test
    void aKeptExceptionIsStoredAndRethrownOnReplayWithoutRunning() {
        payments.failNextWith(new CardDeclinedException("insufficient funds"));
        assertThatThrownBy(() -> payments.charge("p-2", 100)).isInstanceOf(CardDeclinedException.class);
        assertThatThrownBy(() -> payments.charge("p-2", 100))
                .isExactlyInstanceOf(CardDeclinedException.class)
                .hasMessage("insufficient funds");
        assertThat(payments.attempts()).isEqualTo(1);
    }

    @Test
    void releaseOnOverridesKeepOn() throws Exception {
        payments.failNextWith(new GatewayTimeoutException("gateway timed out"));
        assertThatThrownBy(() -> payments.charge("p-3", 100)).isInstanceOf(GatewayTimeoutException.class);
        assertThat(payments.charge("p-3", 100)).isEqualTo("charged 100");
        assertThat(payments.attempts()).isEqualTo(2);
    }
}
