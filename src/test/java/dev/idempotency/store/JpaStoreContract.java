package dev.idempotency.store;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import jakarta.transaction.RollbackException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import dev.idempotency.core.Sighting;
import dev.idempotency.spi.IdempotencyRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JPA store through the engine, with Hibernate and a real JTA transaction manager (Narayana) over a
 * real database. Each subclass names one database; every test counts side effects.
 */
abstract class JpaStoreContract {

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Policy REJECT = new Policy(Duration.ofHours(24), LEASE, false, Duration.ZERO);
    static final Policy WAIT = new Policy(Duration.ofHours(24), LEASE, true, Duration.ofSeconds(60));

    final FakeClock clock = new FakeClock();
    final ExecutorService pool = Executors.newFixedThreadPool(32);
    JtaEnvironment env;

    abstract TestDatabase database();

    @BeforeEach
    void start() {
        database().assumeAvailable();
        database().reset();
        env = new JtaEnvironment(database());
    }

    @AfterEach
    void stop() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
        if (env != null) {
            env.close();
        }
    }

    IdempotencyEngine engine(String node) {
        return new IdempotencyEngine(env.store, clock, node, env.bridge(), new LocalCompletionSignals(),
                Executors.newSingleThreadExecutor(), Duration.ofSeconds(30));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aReleaseAfterTheCompletionLeavesTheRecordFinished() {
        IdempotencyEngine engine = engine("node-1");
        ScopedKey key = new ScopedKey("m", "p", "finished");
        Ticket t = ((Decision.Proceed) engine.begin(key, "fp", null, REJECT)).ticket();
        engine.complete(t, bytes("done"));
        assertThat(env.store.release(t, clock.instant())).as("fenced by status").isFalse();
        assertThat(env.store.find(key)).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(RecordStatus.COMPLETED));
        assertThat(engine.begin(key, "fp", null, REJECT)).isInstanceOf(Decision.Replay.class);
    }

    /**
     * A live holder never loses its claim: a call three times longer than its lease keeps its claim (its node renews
     * the lease) while duplicates arrive from another node throughout; a holder that stops renewing (its node died) is
     * taken over once its last lease ends. Real time, a one-second lease: without the renewal node B takes the key over
     * after one second and the operation runs twice.
     */
    @Test
    void aLiveHolderKeepsItsClaimPastItsLeaseAndADeadOneIsTakenOver() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        Policy shortLease = new Policy(Duration.ofHours(1), lease, false, Duration.ZERO);
        java.util.concurrent.ScheduledExecutorService heartbeats = Executors.newScheduledThreadPool(2);
        try {
            IdempotencyEngine a = new IdempotencyEngine(env.store, java.time.Clock.systemUTC(), "node-a", env.bridge(),
                    new LocalCompletionSignals(), Executors.newSingleThreadExecutor(), Duration.ofSeconds(30));
            IdempotencyEngine b = new IdempotencyEngine(env.store, java.time.Clock.systemUTC(), "node-b", env.bridge(),
                    new LocalCompletionSignals(), Executors.newSingleThreadExecutor(), Duration.ofSeconds(30));
            a.renewLeasesWith(heartbeats, Duration.ofMinutes(1));
            b.renewLeasesWith(heartbeats, Duration.ofMinutes(1));
            ScopedKey key = new ScopedKey("m", "p", "long-call");
            AtomicInteger executions = new AtomicInteger();

            Ticket first = ((Decision.Proceed) a.begin(key, "fp", null, shortLease)).ticket();
            executions.incrementAndGet();
            assertThat(a.heartbeats()).isEqualTo(1);
            int turnedAway = 0;
            long end = System.nanoTime() + lease.multipliedBy(3).toNanos();
            while (System.nanoTime() < end) { // the long call runs: duplicates from node B every 20 ms
                try {
                    Decision d = b.begin(key, "fp", null, shortLease);
                    if (d instanceof Decision.Proceed taken) {
                        executions.incrementAndGet();
                        b.release(taken.ticket());
                    }
                } catch (IdempotencyInProgressException e) {
                    turnedAway++;
                }
                Thread.sleep(20);
            }
            a.complete(first, bytes("charged once"));
            assertThat(executions).as("executions of a call three leases long").hasValue(1);
            assertThat(turnedAway).isGreaterThan(10);
            assertThat(a.heartbeats()).as("the heartbeat stops with the completion").isZero();
            assertThat(((Decision.Replay) b.begin(key, "fp", null, shortLease)).record().response())
                    .isEqualTo(bytes("charged once"));

            // A holder that dies stops renewing: its claim is taken over once its last lease ends, not before.
            ScopedKey orphan = new ScopedKey("m", "p", "orphan");
            a.begin(orphan, "fp", null, shortLease);
            a.renewLeasesWith(null, Duration.ZERO); // node A dies: its heartbeats stop
            long died = System.nanoTime();
            Ticket takenOver = null;
            while (takenOver == null && System.nanoTime() - died < Duration.ofSeconds(10).toNanos()) {
                try {
                    takenOver = ((Decision.Proceed) b.begin(orphan, "fp", null, shortLease)).ticket();
                } catch (IdempotencyInProgressException e) {
                    Thread.sleep(20);
                }
            }
            assertThat(takenOver).as("taken over after the dead holder's lease").isNotNull();
            assertThat(takenOver.takeover()).isTrue();
            b.complete(takenOver, bytes("after take-over"));
        } finally {
            heartbeats.shutdownNow();
        }
    }

    /**
     * One clock for every node: two nodes whose own clocks are ten minutes apart, either way of the database's, share
     * the database's clock: neither takes over the other's live claim nor expires its finished record early, and keys
     * raced and retried from both run once each. With each node's own clock, node A (ahead) takes B's claim over at
     * once and runs B's finished keys again.
     */
    @Test
    void nodesWhoseClocksAreTenMinutesWrongShareTheDatabasesClock() throws Exception {
        java.time.Clock real = java.time.Clock.systemUTC();
        dev.idempotency.core.StoreClock aheadClock = new dev.idempotency.core.StoreClock(env.store, java.time.Clock.offset(real, Duration.ofMinutes(10)));
        dev.idempotency.core.StoreClock behindClock = new dev.idempotency.core.StoreClock(env.store, java.time.Clock.offset(real, Duration.ofMinutes(-10)));
        assertThat(aheadClock.sync()).as("the database tells its time").isTrue();
        assertThat(behindClock.sync()).isTrue();
        assertThat(Duration.between(aheadClock.instant(), behindClock.instant()).abs()).isLessThan(Duration.ofSeconds(1));
        Policy policy = new Policy(Duration.ofMinutes(5), Duration.ofMinutes(1), false, Duration.ZERO);
        IdempotencyEngine ahead = new IdempotencyEngine(env.store, aheadClock, "node-ahead", env.bridge(),
                new LocalCompletionSignals(), Executors.newSingleThreadExecutor(), Duration.ofSeconds(30));
        IdempotencyEngine behind = new IdempotencyEngine(env.store, behindClock, "node-behind", env.bridge(),
                new LocalCompletionSignals(), Executors.newSingleThreadExecutor(), Duration.ofSeconds(30));

        for (IdempotencyEngine[] pair : new IdempotencyEngine[][] {{behind, ahead}, {ahead, behind}}) {
            ScopedKey key = new ScopedKey("m", "p", "skew-" + pair[0].nodeId());
            Ticket held = ((Decision.Proceed) pair[0].begin(key, "fp", null, policy)).ticket();
            assertThatThrownBy(() -> pair[1].begin(key, "fp", null, policy)).as("no early take-over")
                    .isInstanceOf(IdempotencyInProgressException.class);
            pair[0].complete(held, bytes("once"));
            assertThat(pair[1].begin(key, "fp", null, policy)).as("no early expiry").isInstanceOf(Decision.Replay.class);
        }

        AtomicInteger executions = new AtomicInteger();
        List<Future<?>> racers = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int k = 0; k < 20; k++) {
            ScopedKey key = new ScopedKey("m", "p", "raced-" + k);
            for (int i = 0; i < 8; i++) {
                IdempotencyEngine node = i % 2 == 0 ? ahead : behind;
                racers.add(pool.submit(() -> {
                    go.await();
                    for (int attempt = 0; attempt < 3; attempt++) { // a first call and two retries
                        try {
                            if (node.begin(key, "fp", null, policy) instanceof Decision.Proceed p) {
                                executions.incrementAndGet();
                                node.complete(p.ticket(), bytes("done"));
                            }
                        } catch (IdempotencyInProgressException e) {
                            // the other call is still running: this caller retries
                        }
                    }
                    return null;
                }));
            }
        }
        go.countDown();
        for (Future<?> f : racers) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertThat(executions).as("one execution per key").hasValue(20);
    }

    @Test
    void managementDeletesOldestFirstInBatchesAndNeverARunningCallsClaim() {
        IdempotencyEngine engine = engine("node-1");
        for (int i = 0; i < 5; i++) {
            Ticket t = ((Decision.Proceed) engine.begin(new ScopedKey("m", "p", "done-" + i), "fp", null, REJECT)).ticket();
            engine.complete(t, bytes("r" + i));
            clock.advance(Duration.ofSeconds(1));
        }
        engine.begin(new ScopedKey("m", "p", "dead"), "fp", null, REJECT); // its holder never completes
        clock.advance(LEASE.plusSeconds(1));
        ScopedKey running = new ScopedKey("m", "p", "running");
        engine.begin(running, "fp", null, REJECT); // a call running now: its lease is alive

        List<ScopedKey> deleted = new ArrayList<>();
        assertThat(env.store.delete(new Deletion.OldestBeyond(5), clock.instant(), 2, deleted::add)).isEqualTo(2);
        assertThat(deleted).extracting(ScopedKey::key).containsExactly("done-0", "done-1");
        deleted.clear();
        // Every row is older than the cutoff, the running claim too: it stays.
        assertThat(env.store.delete(new Deletion.FirstSeenBefore(clock.instant().plusSeconds(1)), clock.instant(), 2, deleted::add))
                .isEqualTo(4);
        assertThat(deleted).extracting(ScopedKey::key).containsExactly("done-2", "done-3", "done-4", "dead");
        assertThat(env.store.delete(new Deletion.All(), clock.instant(), 2, deleted::add)).isZero();
        assertThat(env.store.delete(new Deletion.OldestBeyond(0), clock.instant(), 2, deleted::add)).isZero();
        assertThat(env.store.find(running)).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(RecordStatus.IN_PROGRESS));
        assertThatThrownBy(() -> engine.begin(running, "fp", null, REJECT)).as("still held").isInstanceOf(IdempotencyInProgressException.class);
    }

    @Test
    void thirtyTwoRacingDuplicatesRunTheOperationOnce() throws Exception {
        race(REJECT);
    }

    @Test
    void thirtyTwoRacingWaitingDuplicatesRunOnceAndAllGetTheReplay() throws Exception {
        Outcomes o = race(WAIT);
        assertThat(o.replays.get()).isEqualTo(31);
    }

    private Outcomes race(Policy policy) throws Exception {
        IdempotencyEngine engine = engine("node-a");
        ScopedKey key = new ScopedKey("race", "anonymous", "one-key");
        AtomicInteger executions = new AtomicInteger();
        Outcomes o = new Outcomes();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            futures.add(pool.submit((Callable<Void>) () -> {
                start.await();
                try {
                    Decision d = engine.begin(key, "fp", null, policy);
                    if (d instanceof Decision.Proceed p) {
                        executions.incrementAndGet();
                        engine.complete(p.ticket(), bytes("receipt"));
                    } else {
                        assertThat(((Decision.Replay) d).record().response()).isEqualTo(bytes("receipt"));
                        o.replays.incrementAndGet();
                    }
                } catch (IdempotencyInProgressException e) {
                    o.inProgress.incrementAndGet();
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS); // any unexpected exception fails here
        }
        assertThat(executions.get()).isEqualTo(1);
        assertThat(o.replays.get() + o.inProgress.get()).isEqualTo(31);
        assertThat(env.store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
        return o;
    }

    static final class Outcomes {
        final AtomicInteger replays = new AtomicInteger();
        final AtomicInteger inProgress = new AtomicInteger();
    }

    @Test
    void aThousandDistinctKeysFromEightThreadsRunAThousandTimes() throws Exception {
        IdempotencyEngine engine = engine("node-a");
        AtomicInteger executions = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            futures.add(pool.submit((Callable<Void>) () -> {
                for (int i = next.getAndIncrement(); i < 1000; i = next.getAndIncrement()) {
                    Decision d = engine.begin(new ScopedKey("distinct", "anonymous", "key-" + i), "fp", null, REJECT);
                    executions.incrementAndGet();
                    engine.complete(((Decision.Proceed) d).ticket(), bytes("r" + i));
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(300, TimeUnit.SECONDS);
        }
        assertThat(executions.get()).isEqualTo(1000);
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1000);
    }

    @Test
    void anExpiredLeaseRacedByEightTakersIsTakenOverOnce() throws Exception {
        ScopedKey key = new ScopedKey("takeover", "anonymous", "k");
        engine("dead-node").begin(key, "fp", null, REJECT);
        clock.advance(LEASE.plusSeconds(1));
        AtomicInteger takeovers = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        // Hold the row lock so that all eight have read the expired lease before any can write.
        Connection holder = database().connect();
        holder.setAutoCommit(false);
        try (Statement s = holder.createStatement()) {
            s.executeQuery("select id from idempotency_record where id = '" + key.id() + "' for update").close();
        }
        for (int i = 0; i < 8; i++) {
            IdempotencyEngine taker = engine("taker-" + i);
            futures.add(pool.submit((Callable<Void>) () -> {
                try {
                    Decision d = taker.begin(key, "fp", null, REJECT);
                    assertThat(((Decision.Proceed) d).ticket().takeover()).isTrue();
                    takeovers.incrementAndGet();
                } catch (IdempotencyInProgressException e) {
                    rejected.incrementAndGet();
                }
                return null;
            }));
        }
        database().awaitSessionsWaitingForALock(8);
        holder.commit();
        holder.close();
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        assertThat(takeovers.get()).isEqualTo(1);
        assertThat(rejected.get()).isEqualTo(7);
        IdempotencyRecord r = env.store.find(key).orElseThrow();
        assertThat(r.owner()).startsWith("taker-");
        assertThat(r.attempts()).isEqualTo(2);
        assertThat(r.version()).isEqualTo(2);
    }

    @Test
    void aLateCompletionByTheOldOwnerIsRefusedAndItsTransactionRollsBack() throws Exception {
        ScopedKey key = new ScopedKey("fence", "anonymous", "k");
        IdempotencyEngine old = engine("old-node");
        Ticket stale = ((Decision.Proceed) old.begin(key, "fp", null, REJECT)).ticket();
        clock.advance(LEASE.plusSeconds(1));
        IdempotencyEngine taker = engine("new-node");
        Ticket current = ((Decision.Proceed) taker.begin(key, "fp", null, REJECT)).ticket();

        env.tm.begin();
        insertPayment("late-payment");
        assertThatThrownBy(() -> old.complete(stale, bytes("late"))).isInstanceOf(IdempotencyLeaseLostException.class);
        assertThatThrownBy(env.tm::commit).isInstanceOf(RollbackException.class);

        assertThat(database().count("select count(*) from test_payment")).isZero();
        IdempotencyRecord r = env.store.find(key).orElseThrow();
        assertThat(r.status()).isEqualTo(RecordStatus.IN_PROGRESS);
        assertThat(r.owner()).isEqualTo("new-node");

        taker.complete(current, bytes("receipt"));
        assertThat(env.store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void aJoinedCompletionCommitsWithTheBusinessWrite() throws Exception {
        ScopedKey key = new ScopedKey("jta", "anonymous", "commit");
        IdempotencyEngine engine = engine("node-a");
        env.tm.begin();
        Ticket t = ((Decision.Proceed) engine.begin(key, "fp", null, REJECT)).ticket();
        insertPayment("p-1");
        engine.complete(t, bytes("receipt"));
        // Not visible outside the transaction yet: the completion is part of it.
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isZero();
        env.tm.commit();

        assertThat(database().count("select count(*) from test_payment")).isEqualTo(1);
        assertThat(env.store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(engine.begin(key, "fp", null, REJECT)).isInstanceOf(Decision.Replay.class);
    }

    @Test
    void aBusinessRollbackReleasesTheKey() throws Exception {
        ScopedKey key = new ScopedKey("jta", "anonymous", "rollback");
        IdempotencyEngine engine = engine("node-a");
        env.tm.begin();
        Ticket t = ((Decision.Proceed) engine.begin(key, "fp", null, REJECT)).ticket();
        insertPayment("p-2");
        engine.complete(t, bytes("receipt"));
        env.tm.rollback();

        assertThat(database().count("select count(*) from test_payment")).isZero();
        IdempotencyRecord r = env.store.find(key).orElseThrow();
        assertThat(r.isReleased()).isTrue();
        Decision retry = engine.begin(key, "fp", null, REJECT);
        assertThat(retry).isInstanceOf(Decision.Proceed.class);
        assertThat(((Decision.Proceed) retry).ticket().attempts()).isEqualTo(2);
    }

    @Test
    void expiredRecordsArePurgedInBoundedBatches() {
        IdempotencyEngine engine = engine("node-a");
        Policy shortTtl = new Policy(Duration.ofMinutes(1), Duration.ofSeconds(10), false, Duration.ZERO);
        for (int i = 0; i < 7; i++) {
            Ticket t = ((Decision.Proceed) engine.begin(new ScopedKey("purge", "anonymous", "k" + i), "fp", null, shortTtl)).ticket();
            engine.complete(t, bytes("r"));
        }
        engine.begin(new ScopedKey("purge", "anonymous", "live"), "fp", null, REJECT);
        clock.advance(Duration.ofMinutes(2));
        assertThat(env.store.purgeExpired(clock.instant(), 5)).isEqualTo(5);
        assertThat(env.store.purgeExpired(clock.instant(), 5)).isEqualTo(2);
        assertThat(env.store.purgeExpired(clock.instant(), 5)).isZero();
        assertThat(database().count("select count(*) from idempotency_record")).isEqualTo(1);
    }

    /**
     * Nothing deletes a live claim: the purge selects, then deletes; a take-over that commits in between keeps its row.
     * The take-over (the row claimed again: in progress, a new lease and time to live, the next version) is held
     * uncommitted on a connection of the test's until the purge's delete is seen waiting for its row lock; then it
     * commits. A delete that did not judge the row again (by id alone) would delete the live claim.
     */
    @Test
    void aTakeOverBetweenThePurgesSelectAndItsDeleteKeepsTheRow() throws Exception {
        Policy shortTtl = new Policy(Duration.ofMinutes(1), Duration.ofSeconds(10), false, Duration.ZERO);
        ScopedKey key = new ScopedKey("purge", "anonymous", "taken-over");
        engine("dead-node").begin(key, "fp", null, shortTtl); // its holder died: lease and time to live run out
        clock.advance(Duration.ofMinutes(2));
        long now = clock.millis();
        Connection takeOver = database().connect();
        takeOver.setAutoCommit(false);
        try (PreparedStatement ps = takeOver.prepareStatement("update idempotency_record set owner = 'node-b',"
                + " lease_until = ?, expires_at = ?, attempts = attempts + 1, version = version + 1 where id = ?")) {
            ps.setLong(1, now + LEASE.toMillis());
            ps.setLong(2, now + Duration.ofHours(1).toMillis());
            ps.setString(3, key.id());
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        Future<Integer> purged = pool.submit(() -> env.store.purgeExpired(clock.instant(), 10));
        database().awaitSessionsWaitingForALock(1); // the purge has selected the expired row and waits to delete it
        takeOver.commit();
        takeOver.close();
        assertThat(purged.get(60, TimeUnit.SECONDS)).as("the row, judged again, is a live claim").isZero();
        IdempotencyRecord r = env.store.find(key).orElseThrow();
        assertThat(r.owner()).isEqualTo("node-b");
        assertThat(r.status()).isEqualTo(RecordStatus.IN_PROGRESS);
        assertThatThrownBy(() -> engine("node-c").begin(key, "fp", null, REJECT)).isInstanceOf(IdempotencyInProgressException.class);
    }

    /** {@code recordSightings}: last seen only ever moves forward, nothing else changes, unknown keys are skipped. */
    @Test
    void sightingsMoveLastSeenForwardAndNothingElse() {
        IdempotencyEngine engine = engine("node-1");
        ScopedKey seen = new ScopedKey("m", "p", "seen");
        Sighting first = engine.sight(seen, null, REJECT);
        assertThat(first.seenBefore()).isFalse();
        IdempotencyRecord before = env.store.find(seen).orElseThrow();
        Instant later = clock.instant().plusSeconds(40);
        env.store.recordSightings(Map.of(seen, later, new ScopedKey("m", "p", "never-seen"), later));
        env.store.recordSightings(Map.of(seen, later.minusSeconds(30))); // an older sighting, flushed late
        IdempotencyRecord after = env.store.find(seen).orElseThrow();
        assertThat(after.lastSeen()).isEqualTo(later);
        assertThat(after.toBuilder().lastSeen(before.lastSeen()).build()).usingRecursiveComparison().isEqualTo(before);
        assertThat(env.store.find(new ScopedKey("m", "p", "never-seen"))).isEmpty();
        clock.advance(Duration.ofSeconds(50));
        Sighting next = engine("node-2").sight(seen, null, REJECT);
        assertThat(next.seenBefore()).isTrue();
        assertThat(next.lastSeen()).contains(later);
    }

    @Test
    void keysDifferingOnlyInCaseAreDifferentKeys() {
        IdempotencyEngine engine = engine("node-a");
        assertThat(engine.begin(new ScopedKey("case", "anonymous", "Key"), "fp", null, REJECT)).isInstanceOf(Decision.Proceed.class);
        assertThat(engine.begin(new ScopedKey("case", "anonymous", "key"), "fp", null, REJECT)).isInstanceOf(Decision.Proceed.class);
    }

    private void insertPayment(String id) throws SQLException {
        try (Connection c = env.dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
            ps.setString(1, id);
            ps.setLong(2, 100);
            ps.executeUpdate();
        }
    }

}
