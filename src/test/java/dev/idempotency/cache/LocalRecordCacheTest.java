package dev.idempotency.cache;

import dev.idempotency.core.CompletionSignals;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library's own cache of one JVM ({@code cache.mode=local}): how long entries live (by a ticker moved by hand), its
 * tombstones, its bound, its wake-ups. The engine in front of a store with it: {@link LocalCacheFrontTest}.
 */
class LocalRecordCacheTest {

    final FakeClock clock = new FakeClock();
    final AtomicLong nanos = new AtomicLong();
    final LocalCompletionSignals signals = new LocalCompletionSignals();
    final LocalRecordCache cache = new LocalRecordCache(1000, null, clock, signals, nanos::get);

    IdempotencyRecord finished(String key, Duration ttl) {
        return IdempotencyRecord.of(new ScopedKey("local", "anonymous", key)).status(RecordStatus.COMPLETED).fingerprint("fp")
                .response("receipt".getBytes(StandardCharsets.UTF_8)).expiresAt(clock.instant().plus(ttl)).build();
    }

    void pass(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void aRecordIsHeldUntilItsExpiryAndNoLonger() {
        IdempotencyRecord r = finished("k1", Duration.ofSeconds(10));
        cache.put(r);
        assertThat(cache.get(r.scopedKey())).containsSame(r);
        pass(Duration.ofSeconds(9));
        assertThat(cache.get(r.scopedKey())).containsSame(r);
        pass(Duration.ofSeconds(2));
        assertThat(cache.get(r.scopedKey())).isEmpty();
        assertThat(cache.holds(r.scopedKey())).isFalse();
        assertThat(cache.size()).isZero();
    }

    /**
     * With several nodes, each with a cache of its own, another node's deletion of a record never reaches this one: a
     * record is held at most {@code idempotency.cache.local-max-age} from its write, then read again from the store.
     */
    @Test
    void aRecordIsHeldAtMostTheMaxAgeThoughItLivesLonger() {
        LocalRecordCache aged = new LocalRecordCache(1000, Duration.ofMinutes(1), clock, signals, nanos::get);
        IdempotencyRecord written = finished("k-written", Duration.ofHours(24));
        IdempotencyRecord loaded = finished("k-loaded", Duration.ofHours(24));
        aged.put(written);
        aged.putLoaded(loaded);
        pass(Duration.ofSeconds(59));
        assertThat(aged.get(written.scopedKey())).containsSame(written);
        assertThat(aged.get(loaded.scopedKey())).containsSame(loaded);
        pass(Duration.ofSeconds(2));
        assertThat(aged.get(written.scopedKey())).as("a minute after its write").isEmpty();
        assertThat(aged.get(loaded.scopedKey())).isEmpty();
        IdempotencyRecord shortLived = finished("k-short", Duration.ofSeconds(10));
        aged.put(shortLived);
        pass(Duration.ofSeconds(11));
        assertThat(aged.get(shortLived.scopedKey())).as("its record's expiry first").isEmpty();
    }

    @Test
    void aRecordPastItsExpiryIsNotHeld() {
        IdempotencyRecord r = finished("k2", Duration.ZERO);
        cache.put(r);
        cache.putLoaded(r);
        assertThat(cache.get(r.scopedKey())).isEmpty();
        assertThat(cache.size()).isZero();
    }

    @Test
    void aRecordInProgressIsNotHeld() {
        IdempotencyRecord r = finished("k3", Duration.ofHours(1)).toBuilder().status(RecordStatus.IN_PROGRESS).build();
        cache.put(r);
        assertThat(cache.get(r.scopedKey())).isEmpty();
    }

    @Test
    void aBoundedPutLivesNoLongerThanItsBound() {
        IdempotencyRecord r = finished("k4", Duration.ofHours(1));
        cache.put(r, Duration.ofSeconds(5));
        pass(Duration.ofSeconds(4));
        assertThat(cache.get(r.scopedKey())).isPresent();
        pass(Duration.ofSeconds(2));
        assertThat(cache.get(r.scopedKey())).isEmpty();
    }

    /**
     * A record read from the store before a release or a deletion, and put after it, finds the tombstone and stays out
     * for its minute; a completion after the release replaces the tombstone.
     */
    @Test
    void aTombstoneKeepsOutARecordReadBeforeTheReleaseForAMinuteButNotACompletionAfterIt() {
        IdempotencyRecord r = finished("k5", Duration.ofHours(1));
        cache.put(r);
        cache.evict(r.scopedKey());
        assertThat(cache.get(r.scopedKey())).isEmpty();
        assertThat(cache.holds(r.scopedKey())).as("the tombstone").isTrue();
        cache.putLoaded(r);
        assertThat(cache.get(r.scopedKey())).as("loaded before the release: kept out").isEmpty();
        pass(Duration.ofSeconds(InfinispanRecordCache.TOMBSTONE_LIFESPAN_SECONDS + 1));
        assertThat(cache.holds(r.scopedKey())).as("the tombstone is gone").isFalse();
        cache.putLoaded(r);
        assertThat(cache.get(r.scopedKey())).containsSame(r);

        cache.remove(r.scopedKey());
        IdempotencyRecord again = finished("k5", Duration.ofHours(1));
        cache.put(again);
        assertThat(cache.get(r.scopedKey())).as("a completion after the release").containsSame(again);
    }

    @Test
    void aLoadedRecordDoesNotReplaceOneHeld() {
        IdempotencyRecord r = finished("k6", Duration.ofHours(1));
        cache.put(r);
        cache.putLoaded(finished("k6", Duration.ofHours(1)));
        assertThat(cache.get(r.scopedKey())).containsSame(r);
    }

    @Test
    void itHoldsAtMostItsMaximumOfEntries() {
        LocalRecordCache small = new LocalRecordCache(10, null, clock, signals, nanos::get);
        for (int i = 0; i < 100; i++) {
            small.put(finished("b" + i, Duration.ofHours(1)));
        }
        assertThat(small.size()).isLessThanOrEqualTo(10).isPositive();
        small.clear();
        assertThat(small.size()).isZero();
    }

    /** A completion, a record learnt from the store and a release each wake this node's waiters of the key. */
    @Test
    void eachWriteWakesTheWaitersOfItsKey() throws Exception {
        IdempotencyRecord r = finished("k7", Duration.ofHours(1));
        try (CompletionSignals.Subscription waiter = signals.subscribe(r.scopedKey())) {
            assertThat(waiter.await(Duration.ZERO)).isFalse();
            cache.put(r);
            assertThat(waiter.await(Duration.ZERO)).as("woken by the completion").isTrue();
        }
        try (CompletionSignals.Subscription waiter = signals.subscribe(r.scopedKey())) {
            cache.evict(r.scopedKey());
            assertThat(waiter.await(Duration.ZERO)).as("woken by the release").isTrue();
        }
        pass(Duration.ofMinutes(2));
        try (CompletionSignals.Subscription waiter = signals.subscribe(r.scopedKey())) {
            cache.putLoaded(r);
            assertThat(waiter.await(Duration.ZERO)).as("woken by a record learnt from the store").isTrue();
        }
    }

    @Test
    void itIsThisJvmsAlone() {
        assertThat(cache.shared()).isFalse();
        assertThat(cache.members()).isEqualTo(1);
        assertThat(cache.description()).isEqualTo("a local cache (this JVM's, up to 1000 entries)");
    }
}
