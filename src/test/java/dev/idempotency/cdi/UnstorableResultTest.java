package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyResultNotStorableException;
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
 * A result that cannot be written in its stored form, after the method ran (leased claims, in-memory store):
 * a named exception, and the key free at once, never a claim left to wait out its lease.
 */
@EnableWeld
class UnstorableResultTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of("idempotency.lease", "PT10M"), Quotes.class);

    @Inject
    Quotes quotes;

    /** A bean whose getter fails while its price feed is down: JSON-B cannot write it then. */
    public static class Quote {
        private String price;
        private boolean broken;

        public Quote() {
        }

        Quote(String price, boolean broken) {
            this.price = price;
            this.broken = broken;
        }

        public String getPrice() {
            if (broken) {
                throw new IllegalStateException("price feed down");
            }
            return price;
        }

        public void setPrice(String price) {
            this.price = price;
        }
    }

    @ApplicationScoped
    public static class Quotes {
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean broken = true;

        @Idempotent
        public Quote quote(@IdempotencyKey String key) {
            runs.incrementAndGet();
            return new Quote("10.00", broken);
        }

        public void feedIsBack() {
            broken = false;
        }

        public int runs() {
            return runs.get();
        }
    }

    @Test
    void aResultThatCannotBeStoredIsANamedExceptionAndTheRetryRunsAtOnce() {
        assertThatThrownBy(() -> quotes.quote("q-1"))
                .isInstanceOf(IdempotencyResultNotStorableException.class)
                .hasMessageContaining(Quotes.class.getName())
                .hasMessageContaining("'q-1'")
                .hasMessageNotContaining("10.00");
        quotes.feedIsBack();
        // A ten-minute lease: only an explicit release lets the retry run now (not IdempotencyInProgressException).
        assertThat(quotes.quote("q-1").getPrice()).isEqualTo("10.00");
        assertThat(quotes.runs()).isEqualTo(2);
        assertThat(quotes.quote("q-1").getPrice()).as("replayed").isEqualTo("10.00");
        assertThat(quotes.runs()).isEqualTo(2);
    }
}
