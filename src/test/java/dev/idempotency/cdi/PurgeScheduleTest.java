package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.ForIdempotency;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Expired records are purged on a schedule, in bounded batches. */
class PurgeScheduleTest {

    static final FakeClock CLOCK = new FakeClock();

    @ApplicationScoped
    public static class Tokens {
        @Idempotent(ttl = "PT1M")
        public String issue(@IdempotencyKey String key) {
            return "token " + key;
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

    /** Counts down once the purge has deleted everything there was. */
    @ApplicationScoped
    public static class WatchedStore extends StoreSelectionTest.CountingStore {
        final CountDownLatch emptied = new CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicInteger purged = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger batches = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public int purgeExpired(Instant now, int max) {
            int n = super.purgeExpired(now, max);
            assertThat(n).isLessThanOrEqualTo(max);
            if (n > 0) {
                batches.incrementAndGet();
            }
            if (purged.addAndGet(n) == 5) {
                emptied.countDown();
            }
            return n;
        }

        public boolean awaitEmptied() throws InterruptedException {
            return emptied.await(30, TimeUnit.SECONDS);
        }

        public int batches() {
            return batches.get();
        }
    }

    @Test
    void expiredRecordsArePurgedByTheSchedule() throws Exception {
        Map<String, String> config = Map.of("idempotency.purge.interval", "PT0.02S", "idempotency.purge.batch-size", "2");
        try (WeldContainer c = IdempotencyWeld.weld(config, Tokens.class, Time.class, WatchedStore.class).initialize()) {
            Tokens tokens = c.select(Tokens.class).get();
            for (int i = 0; i < 5; i++) {
                tokens.issue("k" + i);
            }
            CLOCK.advance(Duration.ofMinutes(2));
            WatchedStore store = c.select(WatchedStore.class).get();
            assertThat(store.awaitEmptied()).isTrue();
            assertThat(store.batches()).isGreaterThanOrEqualTo(3);
        }
    }
}
