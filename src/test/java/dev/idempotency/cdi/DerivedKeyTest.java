package dev.idempotency.cdi;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeys;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The keys of the messages a call sends: derived from the call's key and the message's name, the same on every run of
 * the call (a retry after a failure), another for another key, name or namespace; the outer call's again once an inner
 * call's work ends; none outside a call's work.
 */
@EnableWeld
class DerivedKeyTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(Invoices.class.getName() + "/issueSwitchedOff/Idempotent/enabled", "false"),
            Orders.class, Invoices.class);

    @Inject
    Orders orders;
    @Inject
    Idempotency idempotency;

    @ApplicationScoped
    public static class Invoices {
        @Idempotent
        public String issue(@IdempotencyKey String key) {
            return IdempotencyKeys.derive("invoice-issued");
        }

        /** Its idempotency switched off by configuration: it runs as a plain method. */
        @Idempotent
        public String issueSwitchedOff(@IdempotencyKey String key) {
            return IdempotencyKeys.derive("invoice-issued");
        }

        /** Its key is optional: without one it runs unprotected. */
        @Idempotent(required = false)
        public String issueIfKeyed(@IdempotencyKey String key) {
            return IdempotencyKeys.derive("invoice-issued");
        }
    }

    @ApplicationScoped
    public static class Orders {
        /** What each run derived, in order. */
        final List<String> derived = new ArrayList<>();
        final Set<String> failOnce = ConcurrentHashMap.newKeySet();

        public void failOnce(String key) {
            failOnce.add(key);
        }

        public Invoices invoices() {
            return invoices;
        }

        public List<String> derived() {
            return List.copyOf(derived);
        }

        @Inject
        Invoices invoices;

        @Idempotent
        public String place(@IdempotencyKey String key) {
            derived.add(IdempotencyKeys.derive("order-placed"));
            derived.add(IdempotencyKeys.derive("order-audited"));
            derived.add(invoices.issue("invoice-of-" + key));
            derived.add(IdempotencyKeys.derive("order-placed")); // the outer call's again after the inner one's ended
            if (failOnce.remove(key)) {
                throw new IllegalStateException("failed after its sends");
            }
            return "placed";
        }

        /** Calls a method whose key is optional, without a key, twice. */
        @Idempotent(namespace = "looping-orders")
        public List<String> placeWithUnkeyedInvoices(@IdempotencyKey String key) {
            return List.of(IdempotencyKeys.derive("invoice-issued"), invoices.issueIfKeyed(null), invoices.issueIfKeyed(null),
                    IdempotencyKeys.derive("invoice-issued"));
        }

        @Idempotent(namespace = "other-orders")
        public String placeElsewhere(@IdempotencyKey String key) {
            return IdempotencyKeys.derive("order-placed");
        }
    }

    @Test
    void aRetriedCallDerivesTheSameKeysAndAnotherCallOthers() {
        orders.failOnce("k-1");
        assertThatThrownBy(() -> orders.place("k-1")).isInstanceOf(IllegalStateException.class);
        orders.place("k-1");
        List<String> first = orders.derived().subList(0, 4);
        List<String> retry = orders.derived().subList(4, 8);
        assertThat(retry).as("the retry derives what the failed run derived").isEqualTo(first);
        assertThat(first.get(0)).as("a UUID's text").matches("[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
        assertThat(first.get(0)).as("another name, another key").isNotEqualTo(first.get(1));
        assertThat(first.get(2)).as("the inner call's own").isNotIn(first.get(0), first.get(1));
        assertThat(first.get(3)).as("the outer call's again").isEqualTo(first.get(0));

        orders.place("k-2");
        assertThat(orders.derived().get(8)).as("another call, another key").isNotEqualTo(first.get(0));
        assertThat(orders.placeElsewhere("k-1")).as("another namespace, another key").isNotEqualTo(first.get(0));
    }

    @Test
    void theFunctionalApisWorkDerivesFromItsKeyOnEveryRetry() throws Exception {
        List<String> derived = new ArrayList<>();
        java.util.concurrent.Callable<String> work = () -> {
            derived.add(IdempotencyKeys.derive("payment-sent"));
            if (derived.size() == 1) {
                throw new IllegalStateException("failed after its send"); // the key is freed: the retry runs
            }
            return "paid";
        };
        assertThatThrownBy(() -> idempotency.call("payments", "pay-1", null, String.class, work)).isInstanceOf(IllegalStateException.class);
        assertThat(idempotency.call("payments", "pay-1", null, String.class, work)).isEqualTo("paid");
        assertThat(derived).hasSize(2);
        assertThat(derived.get(1)).as("the retry derives what the failed run derived").isEqualTo(derived.get(0));
        String other = idempotency.call("payments", "pay-2", null, String.class, () -> IdempotencyKeys.derive("payment-sent"));
        assertThat(other).as("another key, another derived key").isNotEqualTo(derived.get(0));
    }

    @Test
    void aMethodWhoseIdempotencyIsSwitchedOffDerivesRandomKeys() {
        Invoices invoices = orders.invoices();
        assertThat(invoices.issueSwitchedOff("k-off")).isNotEqualTo(invoices.issueSwitchedOff("k-off"));
    }

    /** A call without a key, where the key is optional, runs unprotected: each run's messages get keys of their own. */
    @Test
    void anUnprotectedFunctionalCallDerivesRandomKeys() throws Exception {
        dev.idempotency.Idempotency optional = idempotency.with(dev.idempotency.IdempotencyOptions.builder().required(false).build());
        String first = optional.call("payments", null, null, String.class, () -> IdempotencyKeys.derive("payment-sent"));
        String second = optional.call("payments", null, null, String.class, () -> IdempotencyKeys.derive("payment-sent"));
        assertThat(first).isNotEqualTo(second).matches("[0-9a-f-]{36}");
    }

    /**
     * An unprotected call inside another's work does not take the outer call's key: its messages get keys of their own
     * (each call another), so that two of them are never taken for one.
     */
    @Test
    void anUnprotectedCallDerivesKeysOfItsOwn() {
        List<String> keys = orders.placeWithUnkeyedInvoices("k-loop");
        assertThat(keys.get(1)).isNotEqualTo(keys.get(2)).isNotIn(keys.get(0));
        assertThat(keys.get(3)).as("the outer call's again").isEqualTo(keys.get(0));
    }

    @Test
    void outsideACallThereIsNoKeyToDeriveFrom() {
        assertThatThrownBy(() -> IdempotencyKeys.derive("order-placed")).isInstanceOf(IdempotencyKeyMissingException.class)
                .hasMessageContaining("No idempotent call runs on this thread");
        orders.place("k-3");
        assertThatThrownBy(() -> IdempotencyKeys.derive("order-placed")).as("nor after one ended")
                .isInstanceOf(IdempotencyKeyMissingException.class);
    }
}
