package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.bind.annotation.JsonbProperty;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The key inside the command (a record component, a field, a getter of a parameter's type). */
@EnableWeld
class KeyInsideTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), Orders.class);

    @Inject
    Orders orders;

    /** A command that carries its own key. */
    public record CreateOrder(@IdempotencyKey UUID orderId, long amount, String currency) {
    }

    /** A message envelope whose event id is the key, in a field. */
    public static class Envelope {
        @IdempotencyKey
        public String eventId;
        public String payload;

        public Envelope() {
        }

        Envelope(String eventId, String payload) {
            this.eventId = eventId;
            this.payload = payload;
        }
    }

    /** A JavaBean whose getter is the key; its JSON-B name is {@code id}. */
    public static class Refund {
        private String refundId;
        private long amount;

        public Refund() {
        }

        Refund(String refundId, long amount) {
            this.refundId = refundId;
            this.amount = amount;
        }

        @IdempotencyKey
        @JsonbProperty("id")
        public String getRefundId() {
            return refundId;
        }

        public long getAmount() {
            return amount;
        }
    }

    public record Placed(String orderId, long amount, int run) {
    }

    @ApplicationScoped
    public static class Orders {
        final AtomicInteger executions = new AtomicInteger();

        public int executions() {
            return executions.get();
        }

        @Idempotent
        public Placed place(CreateOrder order) {
            return new Placed(order.orderId().toString(), order.amount(), executions.incrementAndGet());
        }

        @Idempotent
        public Placed placeVia(String channel, CreateOrder order) {
            return new Placed(order.orderId().toString(), order.amount(), executions.incrementAndGet());
        }

        @Idempotent
        public int handle(Envelope envelope) {
            return executions.incrementAndGet();
        }

        @Idempotent
        public int refund(Refund refund) {
            return executions.incrementAndGet();
        }

        @Idempotent(required = false)
        public int maybe(CreateOrder order) {
            return executions.incrementAndGet();
        }
    }

    @Test
    @DisplayName("A record component: the same command twice runs once and replays an equal result")
    void aRecordComponentIsTheKey() {
        CreateOrder order = new CreateOrder(UUID.randomUUID(), 1200, "EUR");
        Placed first = orders.place(order);
        assertThat(orders.place(new CreateOrder(order.orderId(), 1200, "EUR"))).isEqualTo(first);
        assertThat(orders.executions()).isEqualTo(1);
        assertThat(orders.place(new CreateOrder(UUID.randomUUID(), 1200, "EUR")).run()).as("another key runs").isEqualTo(2);
    }

    @Test
    @DisplayName("The rest of the argument is the fingerprint: the same key with another amount is a reuse, nothing runs")
    void theRestOfTheCommandIsTheFingerprint() {
        UUID id = UUID.randomUUID();
        orders.place(new CreateOrder(id, 1200, "EUR"));
        assertThatThrownBy(() -> orders.place(new CreateOrder(id, 9900, "EUR")))
                .isInstanceOf(IdempotencyKeyReusedException.class).hasMessageContaining("key '" + id + "'");
        assertThat(orders.executions()).isEqualTo(1);
    }

    @Test
    @DisplayName("The other parameters are fingerprinted too")
    void otherParametersAreFingerprinted() {
        CreateOrder order = new CreateOrder(UUID.randomUUID(), 500, "EUR");
        orders.placeVia("web", order);
        assertThat(orders.placeVia("web", order).run()).isEqualTo(1);
        assertThatThrownBy(() -> orders.placeVia("app", order)).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(orders.executions()).isEqualTo(1);
    }

    @Test
    @DisplayName("A field of a class, and a getter (with its JSON-B name), are keys too")
    void aFieldAndAGetter() {
        String event = UUID.randomUUID().toString();
        assertThat(orders.handle(new Envelope(event, "hello"))).isEqualTo(1);
        assertThat(orders.handle(new Envelope(event, "hello"))).isEqualTo(1);
        assertThatThrownBy(() -> orders.handle(new Envelope(event, "bye"))).isInstanceOf(IdempotencyKeyReusedException.class);

        String refund = UUID.randomUUID().toString();
        assertThat(orders.refund(new Refund(refund, 300))).isEqualTo(2);
        assertThat(orders.refund(new Refund(refund, 300))).isEqualTo(2);
        assertThatThrownBy(() -> orders.refund(new Refund(refund, 301))).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(orders.executions()).isEqualTo(2);
    }

    @Test
    @DisplayName("A null command or a null key inside it is a missing key, named; a malformed one is invalid; nothing runs")
    void missingAndMalformedKeysInside() {
        assertThatThrownBy(() -> orders.handle(null)).isInstanceOf(IdempotencyKeyMissingException.class)
                .hasMessageContaining("its key Envelope.eventId (a field of parameter 1) is null or blank");
        assertThatThrownBy(() -> orders.handle(new Envelope(null, "x"))).isInstanceOf(IdempotencyKeyMissingException.class);
        assertThatThrownBy(() -> orders.handle(new Envelope("é", "x"))).isInstanceOf(IdempotencyKeyInvalidException.class);
        assertThat(orders.executions()).isEqualTo(0);
        assertThat(orders.maybe(null)).as("required = false: runs unprotected").isEqualTo(1);
        assertThat(orders.maybe(null)).isEqualTo(2);
    }
}
