package dev.idempotency.observability;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Policy;
import dev.idempotency.events.Conflicted;
import dev.idempotency.events.IdempotencyEvent;
import dev.idempotency.events.Mismatched;
import dev.idempotency.events.Replayed;
import dev.idempotency.events.TakenOver;
import dev.idempotency.metrics.IdempotencyMetrics;
import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;
import dev.idempotency.ForIdempotency;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.ObservesAsync;
import jakarta.enterprise.inject.Produces;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.IdempotencyDeployment;

/** Counters and timers per namespace, and CDI events (synchronous and asynchronous). */
class ObservabilityTest {

    static final FakeClock CLOCK = new FakeClock();
    static final String NS = "orders";

    @ApplicationScoped
    public static class Orders {
        @Idempotent(namespace = NS, lease = "PT10S")
        public String place(@IdempotencyKey String key, int quantity) {
            return "placed " + quantity;
        }
    }

    @ApplicationScoped
    public static class Time {
        @Produces
        @ForIdempotency
        Clock clock() {
            return CLOCK;
        }
    }

    @ApplicationScoped
    public static class EventLog {
        static final List<IdempotencyEvent> SYNC = new CopyOnWriteArrayList<>();
        static final LinkedBlockingQueue<IdempotencyEvent> ASYNC = new LinkedBlockingQueue<>();

        void sync(@Observes IdempotencyEvent e) {
            SYNC.add(e);
        }

        void async(@ObservesAsync IdempotencyEvent e) {
            ASYNC.add(e);
        }
    }

    WeldContainer container;
    Orders orders;
    IdempotencyMetrics metrics;
    IdempotencyRuntime runtime;

    @BeforeEach
    void start() {
        EventLog.SYNC.clear();
        EventLog.ASYNC.clear();
        container = IdempotencyWeld.weld(Map.of("idempotency.store", "memory"), Orders.class, Time.class, EventLog.class).initialize();
        orders = container.select(Orders.class).get();
        metrics = container.select(IdempotencyMetrics.class).get();
        runtime = container.select(IdempotencyRuntime.class).get();
    }

    @AfterEach
    void stop() {
        container.close();
    }

    long count(Counter c) {
        return metrics.snapshot(NS).count(c);
    }

    @Test
    void aScriptedSequenceIsCountedPerNamespace() {
        orders.place("k1", 1);                      // executed
        orders.place("k1", 1);                      // replayed (from the cache)
        orders.place("k1", 1);                      // replayed
        assertThatThrownBy(() -> orders.place("k1", 2)).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThatThrownBy(() -> orders.place(null, 1)).isInstanceOf(IdempotencyKeyMissingException.class);
        assertThatThrownBy(() -> orders.place("k".repeat(300), 1)).isInstanceOf(IdempotencyKeyInvalidException.class);

        assertThat(count(Counter.EXECUTED)).isEqualTo(1);
        assertThat(count(Counter.REPLAYED)).isEqualTo(2);
        assertThat(count(Counter.MISMATCHES)).isEqualTo(1);
        assertThat(count(Counter.KEYS_MISSING)).isEqualTo(1);
        assertThat(count(Counter.KEYS_MALFORMED)).isEqualTo(1);
        IdempotencyMetrics.Snapshot s = metrics.snapshot(NS);
        assertThat(s.timers().get(Timer.CLAIM).count()).isEqualTo(1);
        assertThat(s.timers().get(Timer.COMPLETION).count()).isEqualTo(1);
        assertThat(s.timers().get(Timer.REPLAY).count()).isEqualTo(2);
        assertThat(metrics.namespaces()).containsExactly(NS);
    }

    @Test
    void eventsOnReplayConflictMismatchAndTakeOverSynchronousAndAsynchronous() throws Exception {
        orders.place("k1", 1);
        orders.place("k1", 1);
        assertThatThrownBy(() -> orders.place("k1", 2)).isInstanceOf(IdempotencyKeyReusedException.class);

        // A claim held by a node that then dies: a conflict, and after the lease a take-over.
        Policy policy = new Policy(Duration.ofHours(1), Duration.ofSeconds(10), false, Duration.ZERO);
        ScopedKey held = new ScopedKey(NS, "anonymous", "k2");
        String fingerprint = fingerprintOf(2);
        assertThat(runtime.engine().begin(held, fingerprint, null, policy)).isInstanceOf(Decision.Proceed.class);
        assertThatThrownBy(() -> orders.place("k2", 2)).isInstanceOf(IdempotencyInProgressException.class);
        CLOCK.advance(Duration.ofSeconds(11));
        assertThat(orders.place("k2", 2)).isEqualTo("placed 2");

        assertThat(EventLog.SYNC).extracting(e -> e.getClass().getSimpleName())
                .containsExactly("Replayed", "Mismatched", "Conflicted", "TakenOver");
        assertThat(EventLog.SYNC.get(0)).isInstanceOfSatisfying(Replayed.class, r -> {
            assertThat(r.namespace()).isEqualTo(NS);
            assertThat(r.key()).isEqualTo("k1");
            assertThat(r.fromCache()).isTrue();
        });
        assertThat(EventLog.SYNC.get(1)).isInstanceOf(Mismatched.class);
        assertThat(EventLog.SYNC.get(2)).isInstanceOf(Conflicted.class);
        assertThat(EventLog.SYNC.get(3)).isInstanceOf(TakenOver.class);
        for (int i = 0; i < 4; i++) {
            assertThat(EventLog.ASYNC.poll(10, TimeUnit.SECONDS)).as("async event " + i).isNotNull();
        }
        assertThat(count(Counter.CONFLICTS)).isEqualTo(1);
        assertThat(count(Counter.TAKEOVERS)).isEqualTo(1);
        assertThat(count(Counter.EXECUTED)).as("k1, the held claim of k2, and its take-over").isEqualTo(3);
    }

    /** The fingerprint the interceptor computes for place(key, quantity). */
    String fingerprintOf(int quantity) throws Exception {
        var m = Orders.class.getMethod("place", String.class, int.class);
        return runtime.codec().fingerprint(container.select(IdempotencyDeployment.class).get().settingsFor(m.getDeclaringClass(), m), new Object[] {"x", quantity});
    }

    @Test
    void storeErrorsAreCounted() {
        runtime.engine().observer().storeError(NS, new IdempotencyStoreException("down"));
        assertThat(count(Counter.STORE_ERRORS)).isEqualTo(1);
    }
}
