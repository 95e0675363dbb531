package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.ForIdempotency;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * Per-method overrides, the MicroProfile Fault Tolerance way: {@code <fqcn>/<method>/Idempotent/<member>}, then
 * {@code <fqcn>/Idempotent/<member>}, then {@code Idempotent/<member>}, then the annotation, then
 * {@code idempotency.*}; {@code enabled=false} at each level.
 */
class ConfigOverridesTest {

    static final String FQCN = Orders.class.getName();
    static final FakeClock CLOCK = new FakeClock();

    @ApplicationScoped
    public static class Orders {
        final AtomicInteger executions = new AtomicInteger();

        @Idempotent(ttl = "PT2H")
        public int place(@IdempotencyKey String key) {
            return executions.incrementAndGet();
        }

        @Idempotent
        public int cancel(@IdempotencyKey String key) {
            return executions.incrementAndGet();
        }
    }


    record Run(int first, int second, IdempotencyRecord record) {
    }

    /** Calls place twice with one key, and returns both results and the record. */
    static Run place(Map<String, String> config) {
        Map<String, String> p = new HashMap<>(config);
        p.put("idempotency.store", "memory");
        try (WeldContainer c = IdempotencyWeld.weld(p, Orders.class, ClockBean.class).initialize()) {
            Orders orders = c.select(Orders.class).get();
            int first = orders.place("k");
            int second = orders.place("k");
            IdempotencyRuntime runtime = c.select(IdempotencyRuntime.class).get();
            String namespace = p.getOrDefault(FQCN + "/place/Idempotent/namespace",
                    p.getOrDefault(FQCN + "/Idempotent/namespace",
                            p.getOrDefault("Idempotent/namespace", FQCN + "#place(String)")));
            IdempotencyRecord record = runtime.engine().store().find(new ScopedKey(namespace, "anonymous", "k")).orElse(null);
            return new Run(first, second, record);
        }
    }

    @ApplicationScoped
    public static class ClockBean {
        @Produces
        @ForIdempotency
        java.time.Clock clock() {
            return CLOCK;
        }
    }

    static Duration ttlOf(IdempotencyRecord r) {
        return Duration.between(r.firstSeen(), r.expiresAt());
    }

    @Test
    void theAnnotationBeatsTheGlobalKey() {
        assertThat(ttlOf(place(Map.of("idempotency.ttl", "PT5H")).record())).isEqualTo(Duration.ofHours(2));
    }

    @Test
    void theGlobalKeyAppliesWhereTheAnnotationIsSilent() {
        Map<String, String> p = new HashMap<>(Map.of("idempotency.ttl", "PT5H", "idempotency.store", "memory"));
        try (WeldContainer c = IdempotencyWeld.weld(p, Orders.class, ClockBean.class).initialize()) {
            c.select(Orders.class).get().cancel("k");
            IdempotencyRecord r = c.select(IdempotencyRuntime.class).get().engine().store()
                    .find(new ScopedKey(FQCN + "#cancel(String)", "anonymous", "k")).orElseThrow();
            assertThat(ttlOf(r)).isEqualTo(Duration.ofHours(5));
        }
    }

    @Test
    void eachLevelBeatsTheOnesBelow() {
        assertThat(ttlOf(place(Map.of("Idempotent/ttl", "PT3H")).record())).isEqualTo(Duration.ofHours(3));
        assertThat(ttlOf(place(Map.of("Idempotent/ttl", "PT3H", FQCN + "/Idempotent/ttl", "PT4H")).record()))
                .isEqualTo(Duration.ofHours(4));
        assertThat(ttlOf(place(Map.of("Idempotent/ttl", "PT3H", FQCN + "/Idempotent/ttl", "PT4H",
                FQCN + "/place/Idempotent/ttl", "PT6H")).record())).isEqualTo(Duration.ofHours(6));
    }

    @Test
    void theNamespaceCanBeNamedByConfiguration() {
        Run run = place(Map.of(FQCN + "/place/Idempotent/namespace", "orders-v2"));
        assertThat(run.record().scopedKey().namespace()).isEqualTo("orders-v2");
    }

    @Test
    void enabledFalseSwitchesItOffAtEveryLevel() {
        for (String key : new String[] {"Idempotent/enabled", FQCN + "/Idempotent/enabled", FQCN + "/place/Idempotent/enabled"}) {
            Run run = place(Map.of(key, "false"));
            assertThat(run.second()).as(key).isEqualTo(2);
            assertThat(run.record()).as(key).isNull();
        }
    }

    @Test
    void aMoreSpecificLevelCanSwitchItBackOn() {
        Run run = place(Map.of("Idempotent/enabled", "false", FQCN + "/place/Idempotent/enabled", "true"));
        assertThat(run.second()).isEqualTo(1);
    }

    @Test
    void byDefaultItIsOn() {
        Run run = place(Map.of());
        assertThat(run.first()).isEqualTo(1);
        assertThat(run.second()).isEqualTo(1);
    }
}
