package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyStore;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store that cannot tell its time when the node starts (down, or not reachable yet): until it can, the node writes
 * leases and expiries by its own clock, which may be minutes off the others'. That time must be short: the store is
 * asked again every second until it answers, not only at the next resync (30 s in the library).
 */
class StoreClockTest {

    /** Only its time is asked for; it fails {@code failures} times, then tells a time an hour ahead of this node's. */
    static IdempotencyStore storeDownAtFirst(int failures, AtomicInteger asked, CountDownLatch told) {
        return (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(), new Class<?>[] {IdempotencyStore.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("currentTime")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    if (asked.incrementAndGet() <= failures) {
                        throw new IllegalStateException("the database is not reachable yet");
                    }
                    told.countDown();
                    return Instant.now().plus(Duration.ofHours(1));
                });
    }

    @Test
    @DisplayName("the store's time is asked for every second until it is told, then at the resync period")
    void theStoresTimeIsAskedForSoonUntilItIsTold() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        CountDownLatch told = new CountDownLatch(1);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        StoreClock clock = new StoreClock(storeDownAtFirst(2, asked, told), Clock.systemUTC());
        try {
            clock.start(scheduler, Duration.ofMinutes(30));
            assertThat(Duration.between(Instant.now(), clock.instant()).abs()).as("its own clock meanwhile").isLessThan(Duration.ofMinutes(1));
            assertThat(told.await(10, TimeUnit.SECONDS)).as("told within seconds, not at the 30-minute resync").isTrue();
            // the reading is kept when the scheduled task that asked returns; the scheduler has one thread, so a task
            // submitted now runs after it
            scheduler.submit(() -> { }).get(10, TimeUnit.SECONDS);
            assertThat(asked).hasValue(3);
            assertThat(clock.offset()).as("the store's time from then on").isGreaterThan(Duration.ofMinutes(59));
        } finally {
            clock.stop();
            scheduler.shutdownNow();
        }
    }
}
