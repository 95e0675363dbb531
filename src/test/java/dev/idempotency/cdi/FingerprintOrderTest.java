package dev.idempotency.cdi;

import dev.idempotency.Idempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A request's fingerprint does not depend on the order in which its maps (wherever they sit) and a set given as an
 * argument iterate: {@code Map.of}, {@code Set.of}
 * and hash sets of enums iterate in an order of the JVM's (a random salt, identity hashes), so the same request retried
 * on another node or after a restart would otherwise read as another request and be refused as a reused key. Here the
 * other JVM's order is played by the same entries inserted in another order.
 */
@EnableWeld
class FingerprintOrderTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), Orders.class);

    @Inject
    Orders orders;
    @Inject
    Idempotency idempotency;

    public enum Option { GIFT_WRAP, EXPRESS, INSURED }

    public record Basket(Map<String, Integer> items, Map<Option, String> notes, List<Map<String, Integer>> lines) {
    }

    @ApplicationScoped
    public static class Orders {
        final AtomicInteger executions = new AtomicInteger();

        @Idempotent
        public String place(@IdempotencyKey String key, Map<String, Integer> items, Set<Option> options, Basket basket) {
            return "order-" + executions.incrementAndGet();
        }

        public int executions() {
            return executions.get();
        }

        @Idempotent
        public String quote(@IdempotencyKey String key, Map<String, Object> fields) {
            return "quote-" + executions.incrementAndGet();
        }
    }

    static <K, V> Map<K, V> map(Object... kv) {
        Map<K, V> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            @SuppressWarnings("unchecked") K k = (K) kv[i];
            @SuppressWarnings("unchecked") V v = (V) kv[i + 1];
            m.put(k, v);
        }
        return m;
    }

    @SafeVarargs
    static <T> Set<T> set(T... elements) {
        return new LinkedHashSet<>(List.of(elements));
    }

    @Test
    void theSameMapsAndSetsInAnotherOrderAreTheSameRequest() {
        Basket basket = new Basket(map("apple", 2, "pear", 1), map(Option.EXPRESS, "today", Option.GIFT_WRAP, "red"),
                List.of(map("a", 1, "b", 2)));
        String first = orders.place("k-1", map("apple", 2, "pear", 1, "plum", 5), set(Option.INSURED, Option.EXPRESS), basket);

        Basket reordered = new Basket(map("pear", 1, "apple", 2), map(Option.GIFT_WRAP, "red", Option.EXPRESS, "today"),
                List.of(map("b", 2, "a", 1)));
        String retry = orders.place("k-1", map("plum", 5, "pear", 1, "apple", 2), set(Option.EXPRESS, Option.INSURED), reordered);

        assertThat(retry).as("replayed").isEqualTo(first);
        assertThat(orders.executions()).isEqualTo(1);
    }

    /** Numbers whose text JSON-B and JSON-P write differently (1.5E7, 1.5E+7): one fingerprint, sorted or not. */
    @Test
    void aMapAlreadyInOrderAndOneNotGiveTheSameFingerprintWhateverItsNumbers() {
        String first = orders.quote("k-5", map("amount", 1.5e7, "currency", "EUR", "rate", 1.0e-5));
        String retry = orders.quote("k-5", map("rate", 1.0e-5, "currency", "EUR", "amount", 1.5e7));
        assertThat(retry).isEqualTo(first);
        assertThat(orders.executions()).isEqualTo(1);
    }

    @Test
    void anotherMapOrSetIsStillAnotherRequest() {
        Basket basket = new Basket(map("apple", 2), map(Option.EXPRESS, "today"), List.of(map("a", 1)));
        orders.place("k-2", map("apple", 2), set(Option.EXPRESS), basket);
        assertThatThrownBy(() -> orders.place("k-2", map("apple", 3), set(Option.EXPRESS), basket))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThatThrownBy(() -> orders.place("k-2", map("apple", 2), set(Option.EXPRESS, Option.INSURED), basket))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThatThrownBy(() -> orders.place("k-2", map("apple", 2), set(Option.EXPRESS),
                new Basket(map("apple", 2), map(Option.EXPRESS, "today"), List.of(map("a", 1), map("a", 1)))))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(orders.executions()).isEqualTo(1);
    }

    @Test
    void theFunctionalApiFingerprintsItsRequestTheSameWay() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        String first = idempotency.call("baskets", "k-3", new Basket(map("apple", 2, "pear", 1),
                map(Option.EXPRESS, "x", Option.INSURED, "y"), List.of()), String.class, () -> "basket-" + runs.incrementAndGet());
        String retry = idempotency.call("baskets", "k-3", new Basket(map("pear", 1, "apple", 2),
                map(Option.INSURED, "y", Option.EXPRESS, "x"), List.of()), String.class, () -> "basket-" + runs.incrementAndGet());
        assertThat(idempotency.call("baskets", "k-4", set(Option.EXPRESS, Option.INSURED), String.class,
                () -> "set-" + runs.incrementAndGet())).isEqualTo(idempotency.call("baskets", "k-4",
                set(Option.INSURED, Option.EXPRESS), String.class, () -> "set-" + runs.incrementAndGet()));
        assertThat(retry).isEqualTo(first);
        assertThat(runs).hasValue(2);
    }
}
