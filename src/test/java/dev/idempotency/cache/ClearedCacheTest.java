package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;

import org.infinispan.manager.EmbeddedCacheManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cache emptied by a flush or an import keeps out what was read or finished before it, as a tombstone keeps out an
 * older read of one key: another node's record read from the store before an import replaced it, and a deleted key's
 * late completion whose tombstone the flush took along, are not answered afterwards, on any node; what is read or
 * finished after the clear is cached as before. On a replicated pair of nodes and on a local cache.
 */
class ClearedCacheTest {

    static EmbeddedCacheManager[] pair;
    static InfinispanRecordCache onA;
    static InfinispanRecordCache onB;
    static final Clock CLOCK = Clock.systemUTC();

    @BeforeAll
    static void cluster() throws InterruptedException {
        pair = CacheManagersTest.twoNodes("cleared-test", 7882);
        CacheKeys keys = CacheKeys.unprotected("cleared-test");
        onA = new InfinispanRecordCache(CacheManagers.defineCache(pair[0], 1000), CLOCK, new LocalCompletionSignals(), keys);
        onB = new InfinispanRecordCache(CacheManagers.defineCache(pair[1], 1000), CLOCK, new LocalCompletionSignals(), keys);
    }

    @AfterAll
    static void stop() {
        pair[1].stop();
        pair[0].stop();
    }

    static String answer(RecordCache cache, ScopedKey key) {
        return cache.get(key).map(r -> new String(r.response(), StandardCharsets.UTF_8)).orElse(null);
    }

    /** Node B read the old record before node A's import replaced it and emptied the cache; its put lands after. */
    @Test
    void aRecordReadBeforeAnImportIsNotCachedAfterIt() {
        ScopedKey key = new ScopedKey("payments", "alice", "imported-" + System.nanoTime());
        Instant readStarted = CLOCK.instant().minusMillis(500);
        IdempotencyRecord old = CacheManagersTest.finishedAt(key, readStarted.minusSeconds(60), "before the import");
        onA.clear(); // the import's: the store holds the imported record now
        onB.putLoaded(old, readStarted);
        assertThat(answer(onA, key)).as("node A").isNull();
        assertThat(answer(onB, key)).as("node B").isNull();
        onB.putLoaded(old);
        assertThat(answer(onA, key)).as("a put that does not say when it read, after a clear").isNull();

        IdempotencyRecord imported = CacheManagersTest.finishedAt(key, readStarted.minusSeconds(60), "imported");
        onB.putLoaded(imported, CLOCK.instant().plusSeconds(1)); // a read that started after the clear
        assertThat(answer(onA, key)).as("read after the clear: cached, on every node").isEqualTo("imported");
    }

    /**
     * Without a clear, a key's own tombstone does the same: a record node B read before node A released or deleted the
     * key is not cached over the tombstone, on either node, however late its put comes; a completion after it is.
     */
    @Test
    void aTombstoneKeepsOutARecordReadBeforeTheRelease() {
        ScopedKey key = new ScopedKey("payments", "erin", "released-" + System.nanoTime());
        IdempotencyRecord read = CacheManagersTest.finishedAt(key, CLOCK.instant().minusSeconds(5), "read before the release");
        onA.evict(key);
        onB.putLoaded(read, CLOCK.instant().plusSeconds(1)); // no clear since: only the tombstone keeps it out
        assertThat(answer(onA, key)).as("node A").isNull();
        assertThat(answer(onB, key)).as("node B").isNull();
        onB.put(CacheManagersTest.finishedAt(key, CLOCK.instant().plusSeconds(1), "claimed anew"));
        assertThat(answer(onA, key)).as("a completion after the release").isEqualTo("claimed anew");
    }

    /** A key deleted on node A (its tombstone), then a flush (the tombstone goes too), then B's late completion. */
    @Test
    void aLateCompletionOfADeletedKeyStaysOutAfterAFlush() {
        ScopedKey key = new ScopedKey("payments", "bob", "deleted-" + System.nanoTime());
        IdempotencyRecord finished = CacheManagersTest.finishedAt(key, CLOCK.instant().minusSeconds(2), "deleted");
        onA.put(finished);
        onA.evict(key);
        onA.clear();
        onB.put(finished); // its writer thread was late
        assertThat(answer(onA, key)).isNull();
        assertThat(answer(onB, key)).isNull();

        IdempotencyRecord anew = CacheManagersTest.finishedAt(key, CLOCK.instant().plusSeconds(1), "claimed anew");
        onB.put(anew);
        assertThat(answer(onA, key)).as("a completion after the clear is cached").isEqualTo("claimed anew");
    }

    /**
     * Writers on node B put records they read before the clear, without pause, while node A clears: once the clear has
     * returned and the writers stopped, no such record is left, whatever the interleaving (a write either sees the
     * clear's mark or is swept by it).
     */
    @Test
    void writesRacingAClearLeaveNothingReadBeforeIt() throws Exception {
        ExecutorService writers = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 50; round++) {
                List<ScopedKey> keys = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    keys.add(new ScopedKey("payments", "carol", "raced-" + round + "-" + i));
                }
                Instant readStarted = CLOCK.instant().minusMillis(400);
                AtomicBoolean cleared = new AtomicBoolean();
                CountDownLatch started = new CountDownLatch(2);
                List<Future<?>> running = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    running.add(writers.submit(() -> {
                        started.countDown();
                        int n = 0;
                        // Writing on until the clear is over, and a few rounds past it.
                        for (int after = 0; after < 3; n++) {
                            ScopedKey k = keys.get(n % keys.size());
                            IdempotencyRecord r = CacheManagersTest.finishedAt(k, readStarted.minusSeconds(1), "stale");
                            if (n % 2 == 0) {
                                onB.putLoaded(r, readStarted);
                            } else {
                                onB.put(r);
                            }
                            if (cleared.get()) {
                                after++;
                            }
                        }
                    }));
                }
                assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
                onA.clear();
                cleared.set(true);
                for (Future<?> f : running) {
                    f.get(30, TimeUnit.SECONDS);
                }
                for (ScopedKey k : keys) {
                    assertThat(answer(onA, k)).as("round %d, %s on node A", round, k.key()).isNull();
                    assertThat(answer(onB, k)).as("round %d, %s on node B", round, k.key()).isNull();
                }
            }
        } finally {
            writers.shutdownNow();
        }
    }

    /** The same rules on a node's own cache. */
    @Test
    void aLocalCacheKeepsOutWhatPredatesItsClear() {
        LocalRecordCache local = new LocalRecordCache(1000, CLOCK, new LocalCompletionSignals());
        ScopedKey imported = new ScopedKey("payments", "dave", "imported");
        Instant readStarted = CLOCK.instant().minusMillis(10);
        local.clear();
        local.putLoaded(CacheManagersTest.finishedAt(imported, readStarted.minusSeconds(60), "before the import"), readStarted);
        assertThat(answer(local, imported)).as("read before the clear").isNull();
        local.putLoaded(CacheManagersTest.finishedAt(imported, readStarted.minusSeconds(60), "imported"), CLOCK.instant().plusMillis(5));
        assertThat(answer(local, imported)).as("read after it").isEqualTo("imported");

        ScopedKey deleted = new ScopedKey("payments", "dave", "deleted");
        IdempotencyRecord finished = CacheManagersTest.finishedAt(deleted, CLOCK.instant().minus(Duration.ofSeconds(2)), "deleted");
        local.put(finished);
        local.evict(deleted);
        local.clear();
        local.put(finished);
        assertThat(answer(local, deleted)).as("a late completion of a deleted key, after a flush").isNull();
    }
}
