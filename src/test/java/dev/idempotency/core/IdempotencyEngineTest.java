package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.testing.FakeClock;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The states a key goes through ("The life of a key" in CONTRIBUTING.md), step by step, on the engine with a fake clock and the in-memory store. */
class IdempotencyEngineTest {

    static final Duration TTL = Duration.ofHours(24);
    static final Duration LEASE = Duration.ofSeconds(30);
    static final Policy REJECT = new Policy(TTL, LEASE, false, Duration.ZERO);

    final FakeClock clock = new FakeClock();
    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final IdempotencyEngine engine = IdempotencyEngine.simple(store, clock, "node-a");
    final ScopedKey key = new ScopedKey("payments", "alice", "k-1");

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    Ticket claim(IdempotencyEngine e, String fingerprint) {
        Decision d = e.begin(key, fingerprint, null, REJECT);
        assertThat(d).isInstanceOf(Decision.Proceed.class);
        return ((Decision.Proceed) d).ticket();
    }

    IdempotencyRecord record() {
        return store.find(key).orElseThrow();
    }

    @Test
    @DisplayName("a lease is renewed for at most idempotency.lease-renewal-limit; a claim its door never settles is then taken over")
    void renewalStopsAtItsLimit() throws Exception {
        Policy oneSecond = new Policy(TTL, Duration.ofSeconds(1), false, Duration.ZERO);
        java.util.concurrent.ScheduledExecutorService heartbeats = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            IdempotencyEngine a = IdempotencyEngine.simple(store, java.time.Clock.systemUTC(), "node-a");
            IdempotencyEngine b = IdempotencyEngine.simple(store, java.time.Clock.systemUTC(), "node-b");
            a.renewLeasesWith(heartbeats, Duration.ofSeconds(2));
            a.begin(key, "fp", null, oneSecond); // never completed nor released: a request that ended without its response filter
            assertThat(a.heartbeats()).isEqualTo(1);
            Ticket taken = null;
            long started = System.nanoTime();
            while (taken == null && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(15)) {
                try {
                    taken = ((Decision.Proceed) b.begin(key, "fp", null, oneSecond)).ticket();
                } catch (IdempotencyInProgressException e) {
                    Thread.sleep(50); // the duplicate's retry pace
                }
            }
            assertThat(taken).as("taken over once the renewal limit and one lease have passed").isNotNull();
            assertThat(taken.takeover()).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("renewed up to the limit").isGreaterThanOrEqualTo(Duration.ofSeconds(2));
            assertThat(a.heartbeats()).as("the heartbeat ended at the limit").isZero();
        } finally {
            heartbeats.shutdownNow();
        }
    }

    @Test
    void aFailingCacheNeverTurnsAnAnswerIntoAnError() {
        dev.idempotency.spi.RecordCache broken = new dev.idempotency.spi.RecordCache() {
            @Override
            public java.util.Optional<IdempotencyRecord> get(ScopedKey k) {
                throw new IllegalStateException("cache down");
            }

            @Override
            public void put(IdempotencyRecord finished) {
                throw new IllegalStateException("cache down");
            }

            @Override
            public void evict(ScopedKey k) {
                throw new IllegalStateException("cache down");
            }
        };
        IdempotencyEngine withBrokenCache = new IdempotencyEngine(store, clock, "node-a", TransactionBridge.NONE,
                new LocalCompletionSignals(), Runnable::run, Duration.ofSeconds(5), broken);
        withBrokenCache.complete(claim(withBrokenCache, "fp"), bytes("receipt"));
        Decision replay = withBrokenCache.begin(key, "fp", null, REJECT);
        assertThat(replay).as("answered by the store").isInstanceOf(Decision.Replay.class);
        assertThat(((Decision.Replay) replay).record().response()).isEqualTo(bytes("receipt"));
    }

    @Test
    @DisplayName("1. no live record: claimed IN_PROGRESS with a lease, owned by this node")
    void rule1_claim() {
        Ticket t = claim(engine, "fp");
        IdempotencyRecord r = record();
        assertThat(r.status()).isEqualTo(RecordStatus.IN_PROGRESS);
        assertThat(r.owner()).isEqualTo("node-a");
        assertThat(r.leaseUntil()).isEqualTo(clock.instant().plus(LEASE));
        assertThat(r.expiresAt()).isEqualTo(clock.instant().plus(TTL));
        assertThat(r.attempts()).isEqualTo(1);
        assertThat(t.version()).isEqualTo(r.version());
        assertThat(t.takeover()).isFalse();
    }

    @Nested
    @DisplayName("2. the operation returns: the record is completed")
    class Rule2 {
        @Test
        void withoutTransactionItCommitsOnItsOwn() {
            Ticket t = claim(engine, "fp");
            engine.complete(t, bytes("receipt"));
            IdempotencyRecord r = record();
            assertThat(r.status()).isEqualTo(RecordStatus.COMPLETED);
            assertThat(r.response()).isEqualTo(bytes("receipt"));
            assertThat(r.completedAt()).isEqualTo(clock.instant());
        }

        @Test
        void insideATransactionARollbackReleasesTheKey() {
            RecordingTransaction tx = new RecordingTransaction();
            IdempotencyEngine joined = new IdempotencyEngine(store, clock, "node-a", tx, new LocalCompletionSignals(),
                    Runnable::run, Duration.ofSeconds(5));
            Ticket t = claim(joined, "fp");
            joined.complete(t, bytes("receipt"));
            assertThat(tx.callbacks).hasSize(1);
            tx.finish(false);
            IdempotencyRecord r = record();
            assertThat(r.isReleased()).isTrue();
            assertThat(claim(joined, "fp").attempts()).isEqualTo(2);
        }

        @Test
        void insideATransactionMarkedForRollbackTheKeyIsReleasedAtOnce() {
            RecordingTransaction tx = new RecordingTransaction();
            IdempotencyEngine joined = new IdempotencyEngine(store, clock, "node-a", tx, new LocalCompletionSignals(),
                    Runnable::run, Duration.ofSeconds(5));
            Ticket t = claim(joined, "fp");
            tx.rollbackOnly = true;
            joined.complete(t, bytes("receipt"));
            assertThat(tx.callbacks).isEmpty();
            assertThat(record().isReleased()).isTrue();
        }

        @Test
        void insideATransactionACommitKeepsTheCompletion() {
            RecordingTransaction tx = new RecordingTransaction();
            IdempotencyEngine joined = new IdempotencyEngine(store, clock, "node-a", tx, new LocalCompletionSignals(),
                    Runnable::run, Duration.ofSeconds(5));
            joined.complete(claim(joined, "fp"), bytes("receipt"));
            tx.finish(true);
            assertThat(record().status()).isEqualTo(RecordStatus.COMPLETED);
        }
    }

    @Nested
    @DisplayName("3. the operation fails")
    class Rule3 {
        @Test
        void releaseLetsARetryRunAgainEvenWithAnotherRequest() {
            Ticket t = claim(engine, "fp");
            engine.release(t);
            assertThat(record().isReleased()).isTrue();
            Ticket again = claim(engine, "another-fp");
            assertThat(again.attempts()).isEqualTo(2);
            assertThat(again.version()).isGreaterThan(t.version());
        }

        @Test
        void aKeptFailureIsStoredAndReplayed() {
            engine.fail(claim(engine, "fp"), bytes("declined"));
            Decision d = engine.begin(key, "fp", null, REJECT);
            assertThat(d).isInstanceOf(Decision.Replay.class);
            IdempotencyRecord r = ((Decision.Replay) d).record();
            assertThat(r.status()).isEqualTo(RecordStatus.FAILED);
            assertThat(r.response()).isEqualTo(bytes("declined"));
        }
    }

    @Test
    @DisplayName("4. finished, same fingerprint: replayed without a new claim")
    void rule4_replay() {
        Ticket t = claim(engine, "fp");
        engine.complete(t, bytes("receipt"));
        long version = record().version();
        Decision d = engine.begin(key, "fp", null, REJECT);
        assertThat(d).isInstanceOf(Decision.Replay.class);
        assertThat(((Decision.Replay) d).record().response()).isEqualTo(bytes("receipt"));
        assertThat(record().version()).isEqualTo(version);
    }

    @Test
    @DisplayName("5. same key, another fingerprint: misuse, whether finished or running")
    void rule5_misuse() {
        Ticket t = claim(engine, "fp");
        assertThatThrownBy(() -> engine.begin(key, "other", null, REJECT))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("k-1").hasMessageContaining("payments");
        engine.complete(t, bytes("receipt"));
        assertThatThrownBy(() -> engine.begin(key, "other", null, REJECT)).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(record().fingerprint()).isEqualTo("fp");
    }

    @Nested
    @DisplayName("6. in progress, lease alive")
    class Rule6 {
        @Test
        void rejectedWithRetryAfterTheRestOfTheLeaseAtMostFiveSeconds() {
            claim(engine, "fp");
            clock.advance(Duration.ofMillis(10_500));
            assertThatThrownBy(() -> engine.begin(key, "fp", null, REJECT))
                    .isInstanceOfSatisfying(IdempotencyInProgressException.class,
                            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(5)));
            clock.advance(Duration.ofMillis(17_000)); // 2.5 s of the lease left
            assertThatThrownBy(() -> engine.begin(key, "fp", null, REJECT))
                    .isInstanceOfSatisfying(IdempotencyInProgressException.class,
                            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(3)));
            clock.advance(Duration.ofMillis(2_200)); // 0.3 s left
            assertThatThrownBy(() -> engine.begin(key, "fp", null, REJECT))
                    .isInstanceOfSatisfying(IdempotencyInProgressException.class,
                            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
        }

        @Test
        void aWaiterIsWokenByTheCompletionAndReplays() throws Exception {
            Ticket t = claim(engine, "fp");
            Policy wait = new Policy(TTL, LEASE, true, Duration.ofMinutes(1));
            LocalCompletionSignals signals = new LocalCompletionSignals();
            IdempotencyEngine waiting = new IdempotencyEngine(store, clock, "node-a", TransactionBridge.NONE, signals,
                    Runnable::run, Duration.ofSeconds(5));
            IdempotencyEngine completing = new IdempotencyEngine(store, clock, "node-a", TransactionBridge.NONE, signals,
                    Runnable::run, Duration.ofSeconds(5));
            CompletableFuture<Decision> waiter = CompletableFuture.supplyAsync(() -> waiting.begin(key, "fp", null, wait));
            awaitSubscribed(signals);
            completing.complete(t, bytes("receipt"));
            Decision d = waiter.get(30, TimeUnit.SECONDS);
            assertThat(d).isInstanceOf(Decision.Replay.class);
            assertThat(((Decision.Replay) d).record().response()).isEqualTo(bytes("receipt"));
        }

        @Test
        void aWaiterWokenByAReleaseClaimsAndRuns() throws Exception {
            Ticket t = claim(engine, "fp");
            Policy wait = new Policy(TTL, LEASE, true, Duration.ofMinutes(1));
            LocalCompletionSignals signals = new LocalCompletionSignals();
            IdempotencyEngine shared = new IdempotencyEngine(store, clock, "node-a", TransactionBridge.NONE, signals,
                    Runnable::run, Duration.ofSeconds(5));
            CompletableFuture<Decision> waiter = CompletableFuture.supplyAsync(() -> shared.begin(key, "fp", null, wait));
            awaitSubscribed(signals);
            shared.release(t);
            assertThat(waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(Decision.Proceed.class);
        }

        @Test
        void aWaiterGivesUpAtTheTimeout() {
            claim(engine, "fp");
            Policy shortWait = new Policy(TTL, LEASE, true, Duration.ofMillis(50));
            assertThatThrownBy(() -> engine.begin(key, "fp", null, shortWait))
                    .isInstanceOf(IdempotencyInProgressException.class);
        }

        private void awaitSubscribed(LocalCompletionSignals signals) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (signals.waitingKeys() == 0) {
                assertThat(System.nanoTime()).as("waiter subscribed").isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
    }

    @Nested
    @DisplayName("7. in progress, lease expired: taken over once; the old owner's completion is refused")
    class Rule7 {
        @Test
        void takeOverThenFence() {
            Ticket old = claim(engine, "fp");
            IdempotencyEngine other = IdempotencyEngine.simple(store, clock, "node-b");
            clock.advance(LEASE);
            Ticket taken = claim(other, "fp");
            assertThat(taken.takeover()).isTrue();
            assertThat(taken.attempts()).isEqualTo(2);
            assertThat(record().owner()).isEqualTo("node-b");

            assertThatThrownBy(() -> engine.complete(old, bytes("late")))
                    .isInstanceOf(IdempotencyLeaseLostException.class);
            engine.release(old); // a late release is fenced too
            assertThat(record().owner()).isEqualTo("node-b");

            other.complete(taken, bytes("receipt"));
            assertThat(record().response()).isEqualTo(bytes("receipt"));
        }

        @Test
        void aLateCompletionInsideATransactionMarksItForRollback() {
            RecordingTransaction tx = new RecordingTransaction();
            IdempotencyEngine joined = new IdempotencyEngine(store, clock, "node-a", tx, new LocalCompletionSignals(),
                    Runnable::run, Duration.ofSeconds(5));
            Ticket old = claim(joined, "fp");
            clock.advance(LEASE.plusSeconds(1));
            claim(IdempotencyEngine.simple(store, clock, "node-b"), "fp");
            assertThatThrownBy(() -> joined.complete(old, bytes("late"))).isInstanceOf(IdempotencyLeaseLostException.class);
            assertThat(tx.rollbackOnly).isTrue();
        }

        @Test
        void anotherRequestCannotTakeOver() {
            claim(engine, "fp");
            clock.advance(LEASE);
            assertThatThrownBy(() -> engine.begin(key, "other", null, REJECT)).isInstanceOf(IdempotencyKeyReusedException.class);
        }
    }

    @Test
    @DisplayName("8. past its time to live: treated as absent")
    void rule8_expired() {
        engine.complete(claim(engine, "fp"), bytes("old"));
        clock.advance(TTL);
        Ticket t = claim(engine, "new-fp");
        assertThat(t.attempts()).isEqualTo(1);
        assertThat(record().fingerprint()).isEqualTo("new-fp");
        assertThat(record().firstSeen()).isEqualTo(clock.instant());
    }

    @Test
    @DisplayName("purge deletes expired records in bounded batches, never a live lease")
    void purge() {
        for (int i = 0; i < 5; i++) {
            ScopedKey k = new ScopedKey("payments", "alice", "old-" + i);
            Ticket t = ((Decision.Proceed) engine.begin(k, "fp", null, REJECT)).ticket();
            engine.complete(t, bytes("r"));
        }
        Policy longLease = new Policy(Duration.ofSeconds(1), Duration.ofHours(48), false, Duration.ZERO);
        engine.begin(new ScopedKey("payments", "alice", "running"), "fp", null, longLease);
        clock.advance(TTL);
        engine.begin(new ScopedKey("payments", "alice", "fresh"), "fp", null, REJECT);
        assertThat(store.purgeExpired(clock.instant(), 3)).isEqualTo(3);
        assertThat(store.purgeExpired(clock.instant(), 3)).isEqualTo(2);
        assertThat(store.purgeExpired(clock.instant(), 3)).isZero();
        assertThat(store.size()).isEqualTo(2);
    }

    /** The engine's transaction seam, recorded: lets the engine tests run without a transaction manager. */
    static final class RecordingTransaction implements TransactionBridge {
        final List<Consumer<Boolean>> callbacks = new ArrayList<>();
        boolean active = true;
        boolean rollbackOnly;

        @Override
        public boolean isActive() {
            return active;
        }

        @Override
        public boolean isRollbackOnly() {
            return rollbackOnly;
        }

        @Override
        public void afterCompletion(Consumer<Boolean> committed) {
            callbacks.add(committed);
        }

        @Override
        public void setRollbackOnly() {
            rollbackOnly = true;
        }

        void finish(boolean committed) {
            active = false;
            callbacks.forEach(c -> c.accept(committed));
        }
    }
}
