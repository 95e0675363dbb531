package dev.idempotency.atomic;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.CountingDriver;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;
import dev.idempotency.testing.TextCall;

import org.infinispan.manager.EmbeddedCacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Optimistic claims through the engine and the JPA store, with a real JTA stack (Narayana, an Agroal pool enlisting in
 * it, Hibernate): nothing before the work, one insert of the finished record in its transaction, one commit; duplicates
 * held off by this node's marker; where markers cannot see each other (engines, or JVMs, with no shared cache), the
 * database's unique key lets one commit and rolls the others' work back. Run on H2, PostgreSQL and MariaDB.
 */
abstract class OptimisticClaimContract {

    static final Policy WAIT = AtomicClaimContract.WAIT;
    static final Policy REJECT = AtomicClaimContract.REJECT;

    abstract TestDatabase database();

    /** The JDBC URL the tests and the other JVMs share (H2: a TCP server). */
    String url() {
        return database().url;
    }

    /** The statement that inserts the finished record on this database. */
    abstract String recordInsert();

    JtaEnvironment env;
    LocalCompletionSignals signals;
    IdempotencyEngine engine;
    EmbeddedCacheManager manager;
    /** Four nodes on one database with no shared cache (the other three with none): their markers cannot see each other. */
    final List<IdempotencyEngine> nodes = new ArrayList<>();
    ExecutorService pool;
    final AtomicInteger executions = new AtomicInteger();

    @BeforeEach
    void start() throws SQLException {
        database().assumeAvailable();
        AtomicClaimContract.reset(url(), database());
        env = new JtaEnvironment(url(), database().user, database().password, Map.of(), 20, true, true);
        signals = new LocalCompletionSignals();
        // The first node as the library runs by default: a cache of its own in front of the store.
        manager = CacheManagers.start(false, "optimistic", "node-a", null, "127.0.0.1", 0, "127.0.0.1[0]", 1000);
        engine = new IdempotencyEngine(env.store, Clock.systemUTC(), "node-a", env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30),
                new InfinispanRecordCache(CacheManagers.defineCache(manager, 1000), Clock.systemUTC(), signals));
        pool = Executors.newCachedThreadPool();
        nodes.add(engine);
        for (String node : List.of("node-b", "node-c", "node-d")) {
            nodes.add(node(node, new LocalCompletionSignals()));
        }
    }

    private IdempotencyEngine node(String name, LocalCompletionSignals signals) {
        return new IdempotencyEngine(env.store, Clock.systemUTC(), name, env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE);
    }

    @AfterEach
    void stop() throws Exception {
        if (env != null && env.tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
            env.tm.rollback();
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        if (env != null) {
            env.close();
        }
        if (manager != null) {
            manager.stop();
        }
    }

    static AtomicOutcome<String> call(IdempotencyEngine engine, String key, Policy policy, Callable<String> body) throws Exception {
        return engine.flow(ClaimMode.OPTIMISTIC).run(new ScopedKey("payments", "anonymous", key), "fp-" + key, null, policy,
                TextCall.of(body));
    }

    AtomicOutcome<String> call(String key, Policy policy, Callable<String> body) throws Exception {
        return call(engine, key, policy, body);
    }

    String charge(String key) throws SQLException {
        return AtomicClaimContract.charge(env.dataSource, key, executions.incrementAndGet());
    }

    long rows(String key) {
        return count("select count(*) from test_payment where id like '" + key + "#%'");
    }

    long count(String sql) {
        try (Connection c = DriverManager.getConnection(url(), database().user, database().password);
             Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new AssertionError(sql, e);
        }
    }

    static String text(AtomicOutcome<String> outcome) {
        return outcome instanceof AtomicOutcome.Ran<String> ran ? ran.value()
                : new String(((AtomicOutcome.Replayed<String>) outcome).record().response(), StandardCharsets.UTF_8);
    }

    // --------------------------------------------------------------------------------------------- tests

    @Test
    void aFirstRequestIsOneReadTheBusinessWriteOneInsertOfTheRecordAndOneCommit() throws Exception {
        CountingDriver.reset();
        AtomicOutcome<String> first = call("k-1", REJECT, () -> charge("k-1"));
        List<String> statements = CountingDriver.statements();
        int commits = CountingDriver.commits();

        assertThat(first).isEqualTo(new AtomicOutcome.Ran<>("receipt-k-1"));
        assertThat(statements).as("the statements of a first request").hasSize(3);
        // The store is read before the work runs: an empty cache cannot vouch that the key is new (a flush, a restart,
        // another node's cache), and a retry of a finished key must never run the work again.
        assertThat(statements.get(0)).startsWithIgnoringCase("select").containsIgnoringCase("from idempotency_record");
        assertThat(statements.get(1)).startsWithIgnoringCase("insert into test_payment");
        assertThat(statements.get(2)).startsWithIgnoringCase(recordInsert());
        assertThat(commits).as("one commit").isEqualTo(1);
        assertThat(CountingDriver.rollbacks()).isZero();
        assertThat(count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);

        AtomicOutcome<String> retry = call("k-1", REJECT, () -> charge("k-1"));
        assertThat(retry).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(text(retry)).isEqualTo("receipt-k-1");
        assertThat(executions).hasValue(1);
        assertThat(rows("k-1")).isEqualTo(1);
    }

    @Test
    void insideTheCallersTransactionTheRecordJoinsItAndARollbackLeavesNothing() throws Exception {
        env.tm.begin();
        call("k-2", REJECT, () -> charge("k-2"));
        assertThat(count("select count(*) from idempotency_record")).as("nothing shows before the commit").isZero();
        env.tm.commit();
        assertThat(rows("k-2")).isEqualTo(1);
        assertThat(call("k-2", REJECT, () -> charge("k-2"))).isInstanceOf(AtomicOutcome.Replayed.class);

        env.tm.begin();
        call("k-3", REJECT, () -> charge("k-3"));
        env.tm.rollback();
        assertThat(rows("k-3")).isZero();
        assertThat(count("select count(*) from idempotency_record where id like '%k-3%'")).isZero();
        assertThat(call("k-3", REJECT, () -> charge("k-3"))).as("the retry runs at once").isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(executions).hasValue(3);
    }

    @Test
    void anExceptionLeavesNothingAndTheRetryRunsAtOnce() throws Exception {
        assertThatThrownBy(() -> call("k-4", REJECT, () -> {
            charge("k-4");
            throw new IllegalStateException("declined");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(rows("k-4")).isZero();
        assertThat(count("select count(*) from idempotency_record")).isZero();
        assertThat(call("k-4", REJECT, () -> charge("k-4"))).isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(rows("k-4")).isEqualTo(1);
    }

    /** A failure the method keeps, thrown as the method's answer: stored as text. */
    static final class Declined extends Exception {
        Declined(String message) {
            super(message);
        }
    }

    /** A call whose method keeps {@link Declined} as its answer. */
    private static TextCall keepingDeclines(Callable<String> body) {
        return TextCall.keeping(Declined.class, body);
    }

    /**
     * A caller whose transaction goes on after the method threw a failure it keeps (a checked exception under
     * {@code @Transactional} commits): the failure's record commits with the caller's work, once; every retry gets the
     * failure, and nothing runs again. Where the caller rolls back instead, the failure is kept all the same.
     */
    @Test
    void aKeptFailureInTheCallersTransactionCommitsWithItsWorkOnce() throws Exception {
        ScopedKey key = new ScopedKey("payments", "anonymous", "k-kept");
        env.tm.begin();
        assertThatThrownBy(() -> engine.flow(ClaimMode.OPTIMISTIC).run(key, "fp-k-kept", null, REJECT, keepingDeclines(() -> {
            charge("k-kept");
            throw new Declined("card declined");
        }))).isInstanceOf(Declined.class);
        env.tm.commit(); // the caller caught it, and commits its work
        assertThat(rows("k-kept")).as("the caller's work committed").isEqualTo(1);
        assertThat(count("select count(*) from idempotency_record where status = 'FAILED'")).as("one kept failure").isEqualTo(1);
        for (IdempotencyEngine node : List.of(engine, nodes.get(1))) {
            AtomicOutcome<String> retry = node.flow(ClaimMode.OPTIMISTIC).run(key, "fp-k-kept", null, REJECT,
                    keepingDeclines(() -> charge("k-kept")));
            assertThat(retry).isInstanceOf(AtomicOutcome.Replayed.class);
            assertThat(((AtomicOutcome.Replayed<String>) retry).record().status()).isEqualTo(dev.idempotency.spi.RecordStatus.FAILED);
            assertThat(new String(((AtomicOutcome.Replayed<String>) retry).record().response(), StandardCharsets.UTF_8))
                    .isEqualTo("card declined");
        }
        assertThat(executions).as("the method ran once").hasValue(1);

        ScopedKey rolledBack = new ScopedKey("payments", "anonymous", "k-kept-2");
        env.tm.begin();
        assertThatThrownBy(() -> engine.flow(ClaimMode.OPTIMISTIC).run(rolledBack, "fp-k-kept-2", null, REJECT, keepingDeclines(() -> {
            charge("k-kept-2");
            throw new Declined("card declined");
        }))).isInstanceOf(Declined.class);
        env.tm.rollback();
        assertThat(rows("k-kept-2")).isZero();
        assertThat(count("select count(*) from idempotency_record where status = 'FAILED'")).as("kept after the rollback").isEqualTo(2);
        assertThat(nodes.get(1).flow(ClaimMode.OPTIMISTIC).run(rolledBack, "fp-k-kept-2", null, REJECT,
                keepingDeclines(() -> charge("k-kept-2")))).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(executions).hasValue(2);
    }

    /**
     * A kept failure is the key's answer before its caller hears it, in the library's transaction and in the caller's:
     * a duplicate on a node whose markers this one cannot see finds it at once, and one that committed first is the
     * answer the failing call's caller gets (the duplicate's success; in the caller's own transaction, which cannot
     * commit now, "in progress", and the retry replays it). Before, the failure was stored once the call's transaction
     * had ended: a duplicate that committed meanwhile kept its success while the failing caller held the failure.
     */
    @Test
    void aKeptFailureIsTheKeysAnswerBeforeItsCallerHearsIt() throws Exception {
        IdempotencyEngine other = nodes.get(1);
        // The library's transaction: a duplicate elsewhere commits while the method runs, before it throws.
        AtomicOutcome<String> lost = engine.flow(ClaimMode.OPTIMISTIC).run(key("k-won"), "fp-k-won", null, REJECT,
                keepingDeclines(() -> {
                    charge("k-won");
                    assertThat(pool.submit(() -> call(other, "k-won", REJECT, () -> charge("k-won"))).get(60, TimeUnit.SECONDS))
                            .isInstanceOf(AtomicOutcome.Ran.class);
                    throw new Declined("card declined");
                }));
        assertThat(lost).as("the failing caller gets the answer that was kept first").isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(text(lost)).isEqualTo("receipt-k-won");
        assertThat(rows("k-won")).as("the duplicate's work alone committed").isEqualTo(1);

        // The caller's transaction, marked for rollback before the method threw: the same, told "in progress".
        env.tm.begin();
        assertThatThrownBy(() -> engine.flow(ClaimMode.OPTIMISTIC).run(key("k-won-2"), "fp-k-won-2", null, REJECT,
                keepingDeclines(() -> {
                    charge("k-won-2");
                    env.tm.setRollbackOnly();
                    assertThat(pool.submit(() -> call(other, "k-won-2", REJECT, () -> charge("k-won-2"))).get(60, TimeUnit.SECONDS))
                            .isInstanceOf(AtomicOutcome.Ran.class);
                    throw new Declined("card declined");
                }))).isInstanceOf(IdempotencyInProgressException.class);
        env.tm.rollback();
        AtomicOutcome<String> retry = call("k-won-2", REJECT, () -> charge("k-won-2"));
        assertThat(retry).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(text(retry)).isEqualTo("receipt-k-won-2");

        // The caller's transaction still open after the failure: a duplicate elsewhere replays the failure, not runs.
        env.tm.begin();
        assertThatThrownBy(() -> engine.flow(ClaimMode.OPTIMISTIC).run(key("k-first"), "fp-k-first", null, REJECT,
                keepingDeclines(() -> {
                    charge("k-first");
                    throw new Declined("card declined");
                }))).isInstanceOf(Declined.class);
        AtomicOutcome<String> duplicate = pool.submit(() -> other.flow(ClaimMode.OPTIMISTIC).run(key("k-first"), "fp-k-first",
                null, REJECT, keepingDeclines(() -> charge("k-first")))).get(60, TimeUnit.SECONDS);
        env.tm.rollback();
        assertThat(duplicate).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(((AtomicOutcome.Replayed<String>) duplicate).record().status()).isEqualTo(dev.idempotency.spi.RecordStatus.FAILED);
        assertThat(rows("k-first")).isZero();
        assertThat(executions).as("k-won twice (one rolled back), k-won-2 twice (one rolled back), k-first once").hasValue(5);
    }

    /** A failure the method keeps that is an {@link Error} ({@code keepOn} takes any throwable). */
    static final class Refused extends Error {
        Refused(String message) {
            super(message);
        }
    }

    /** The same rule for a kept failure that is an {@link Error}: it passes the flow's handling of exceptions. */
    @Test
    void aKeptErrorThatLostToADuplicateIsNotHandedToItsCaller() throws Exception {
        IdempotencyEngine other = nodes.get(1);
        AtomicOutcome<String> lost = engine.flow(ClaimMode.OPTIMISTIC).run(key("k-error"), "fp-k-error", null, REJECT,
                TextCall.keeping(Refused.class, () -> {
                    charge("k-error");
                    assertThat(pool.submit(() -> call(other, "k-error", REJECT, () -> charge("k-error"))).get(60, TimeUnit.SECONDS))
                            .isInstanceOf(AtomicOutcome.Ran.class);
                    throw new Refused("refused");
                }));
        assertThat(lost).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(text(lost)).isEqualTo("receipt-k-error");
        assertThat(rows("k-error")).isEqualTo(1);
    }

    static ScopedKey key(String key) {
        return new ScopedKey("payments", "anonymous", key);
    }

    /**
     * The record's insert meets another transaction's uncommitted row of the key (a call on a node whose marker this one
     * cannot see, its commit not yet done): it waits at most the claim lock timeout, then this call's work rolls back and
     * its caller is told the key is in progress; once the other transaction ends without the key, the retry runs at once.
     */
    @Test
    void anInsertThatMeetsAnUncommittedRowOfTheKeyGivesUpWithinTheBoundAndLeavesNothing() throws Exception {
        ScopedKey key = new ScopedKey("payments", "anonymous", "held");
        try (Connection other = DriverManager.getConnection(url(), database().user, database().password)) {
            other.setAutoCommit(false);
            long now = System.currentTimeMillis();
            try (PreparedStatement ps = other.prepareStatement("INSERT INTO idempotency_record (id, namespace, principal,"
                    + " idem_key, status, fingerprint, attempts, first_seen, last_seen, expires_at, lease_until, owner, version)"
                    + " VALUES (?, 'payments', 'anonymous', 'held', 'IN_PROGRESS', 'fp-held', 1, ?, ?, ?, ?, 'elsewhere', 1)")) {
                ps.setString(1, key.id());
                ps.setLong(2, now);
                ps.setLong(3, now);
                ps.setLong(4, now + 3_600_000);
                ps.setLong(5, now + 30_000);
                ps.executeUpdate();
            }
            // Unbounded, the insert would wait for the other transaction, which ends only after this: the get times out.
            Future<AtomicOutcome<String>> held = pool.submit(() -> call(nodes.get(1), "held", REJECT, () -> charge("held")));
            assertThatThrownBy(() -> held.get(30, TimeUnit.SECONDS))
                    .as("given up after the claim lock timeout (1 s), not after the other transaction")
                    .isInstanceOf(java.util.concurrent.ExecutionException.class)
                    .hasCauseInstanceOf(IdempotencyInProgressException.class);
            assertThat(executions).as("the work ran: no marker here saw the other call").hasValue(1);
            assertThat(rows("held")).as("its business row rolled back").isZero();
            other.rollback();
        }
        assertThat(call(nodes.get(1), "held", REJECT, () -> charge("held"))).isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(rows("held")).isEqualTo(1);
    }

    @Test
    void thirtyTwoRacersThatWaitRunOnceAndAllGetItsAnswer() throws Exception {
        List<Future<AtomicOutcome<String>>> results = race("race", WAIT, List.of(engine));
        Set<String> answers = new HashSet<>();
        int ran = 0;
        for (Future<AtomicOutcome<String>> f : results) {
            AtomicOutcome<String> outcome = f.get(120, TimeUnit.SECONDS);
            ran += outcome instanceof AtomicOutcome.Ran ? 1 : 0;
            answers.add(text(outcome));
        }
        assertThat(ran).isEqualTo(1);
        assertThat(answers).containsExactly("receipt-race");
        assertThat(executions).as("held off by the marker: one execution").hasValue(1);
        assertThat(rows("race")).isEqualTo(1);
    }

    @Test
    void thirtyTwoRacersThatRejectRunOnceAndAreAnsweredOrToldItIsInProgress() throws Exception {
        List<Future<AtomicOutcome<String>>> results = race("reject", REJECT, List.of(engine));
        int ran = 0;
        for (Future<AtomicOutcome<String>> f : results) {
            try {
                AtomicOutcome<String> outcome = f.get(120, TimeUnit.SECONDS);
                ran += outcome instanceof AtomicOutcome.Ran ? 1 : 0;
                assertThat(text(outcome)).isEqualTo("receipt-reject");
            } catch (java.util.concurrent.ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(IdempotencyInProgressException.class);
            }
        }
        assertThat(ran).isEqualTo(1);
        assertThat(executions).hasValue(1);
        assertThat(rows("reject")).isEqualTo(1);
    }

    /**
     * Four engines without a shared cache: each one's marker holds off its own duplicates only, so up to four calls run,
     * and the database's unique key lets one commit; the others' business rows roll back, and they replay its answer.
     */
    @Test
    void racersOnNodesWhoseMarkersCannotSeeEachOtherCommitOnceAndAllGetTheWinnersAnswer() throws Exception {
        List<Future<AtomicOutcome<String>>> results = race("blind", WAIT, nodes);
        Set<String> answers = new HashSet<>();
        int ran = 0;
        for (Future<AtomicOutcome<String>> f : results) {
            AtomicOutcome<String> outcome = f.get(120, TimeUnit.SECONDS);
            ran += outcome instanceof AtomicOutcome.Ran ? 1 : 0;
            answers.add(text(outcome));
        }
        assertThat(ran).as("one committed").isEqualTo(1);
        assertThat(answers).containsExactly("receipt-blind");
        assertThat(rows("blind")).as("one business row; the losers' rolled back").isEqualTo(1);
        assertThat(executions.get()).as("at most one execution per node").isBetween(1, nodes.size());
        System.out.printf("OPTIMISTIC-BLIND %s: 32 racers on %d nodes without a shared cache: %d executions, 1 committed%n",
                database(), nodes.size(), executions.get());
    }

    /** 32 racers of one key, spread over the given engines, each call's work held until all have entered. */
    private List<Future<AtomicOutcome<String>>> race(String key, Policy policy, List<IdempotencyEngine> on) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(32);
        List<Future<AtomicOutcome<String>>> results = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            IdempotencyEngine node = on.get(i % on.size());
            results.add(pool.submit(() -> {
                entered.countDown();
                return call(node, key, policy, () -> {
                    String receipt = charge(key);
                    release.await(60, TimeUnit.SECONDS);
                    return receipt;
                });
            }));
        }
        assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();
        // Every racer has entered; those that will run hold their marker once their work has begun (the rest wait or
        // are answered). The work goes on once every node that runs it has begun: no later than a short while.
        AtomicClaimContract.awaitUntil("the first work to begin", () -> executions.get() >= 1);
        release.countDown();
        return results;
    }

    /**
     * Bursts of duplicates on one node, with no hold in the work: a duplicate that looked at the cache just before the
     * first call finished, and takes the key's marks just after, must find the first's record, not run the work again
     * (found by the HTTP load driver's burst workload: a few charges rolled back).
     */
    @Test
    void burstsOfDuplicatesOnOneNodeRunOncePerKeyEvenAsTheFirstFinishes() throws Exception {
        int keys = 200;
        for (int k = 0; k < keys; k++) {
            String key = "burst-" + k;
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Object>> racers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                racers.add(pool.submit(() -> {
                    go.await();
                    try {
                        return call(key, REJECT, () -> charge(key));
                    } catch (IdempotencyInProgressException e) {
                        return e;
                    }
                }));
            }
            go.countDown();
            for (Future<Object> f : racers) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        assertThat(executions).as("one execution per key: no duplicate ran the work").hasValue(keys);
        assertThat(count("select count(*) from test_payment")).isEqualTo(keys);
    }

    @Test
    void aThousandDistinctKeysFromEightThreadsRunAThousandTimes() throws Exception {
        List<Future<?>> done = new ArrayList<>();
        AtomicInteger next = new AtomicInteger();
        for (int t = 0; t < 8; t++) {
            done.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < 1000; i = next.getAndIncrement()) {
                    String key = "many-" + i;
                    assertThat(call(nodes.get(i % nodes.size()), key, REJECT, () -> charge(key))).isInstanceOf(AtomicOutcome.Ran.class);
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(300, TimeUnit.SECONDS);
        }
        assertThat(executions).hasValue(1000);
        assertThat(count("select count(*) from test_payment")).isEqualTo(1000);
        assertThat(count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1000);
    }

    @Test
    void aJvmKilledAfterItsBusinessWriteAndBeforeItsCommitLeavesNothingAndTheRetryRunsAtOnce() throws Exception {
        Process child = OptimisticNode.start(url(), database(), "crash", "crash");
        try {
            BufferedReader out = reader(child);
            OptimisticNode.awaitLine(out, OptimisticNode.WROTE);
            child.destroyForcibly(); // SIGKILL: between the business write and the commit
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            child.destroyForcibly();
        }
        assertThat(rows("crash")).as("nothing committed").isZero();
        long started = System.nanoTime();
        assertThat(call("crash", WAIT, () -> charge("crash"))).as("the retry runs").isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("nothing to wait out").isLessThan(Duration.ofSeconds(30));
        assertThat(rows("crash")).as("one business row").isEqualTo(1);
        assertThat(call("crash", WAIT, () -> charge("crash"))).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(executions).hasValue(1);
    }

    /**
     * Two JVMs, each with a cache of its own (their markers cannot see each other), run the same keys at once: the other
     * JVM's call runs first and holds its work open; this JVM's call runs and commits; the other's insert then meets the
     * committed row, its transaction (its business row with it) rolls back, and it answers with this JVM's answer.
     */
    @Test
    void twoJvmsWithCachesOfTheirOwnRacingTheSameKeysCommitOncePerKeyAndAnswerAlike() throws Exception {
        List<String> keys = List.of("two-1", "two-2", "two-3", "two-4", "two-5");
        Process child = OptimisticNode.start(url(), database(), "race", String.join(",", keys));
        try (PrintWriter in = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
            BufferedReader out = reader(child);
            for (String key : keys) {
                OptimisticNode.awaitLine(out, OptimisticNode.RUNNING + key);
                AtomicOutcome<String> mine = call(key, WAIT, () -> charge(key) + "-here");
                assertThat(mine).as("this JVM's call ran: the other's has not stored its answer").isInstanceOf(AtomicOutcome.Ran.class);
                in.println(OptimisticNode.GO + key);
                String answer = OptimisticNode.awaitLine(out, OptimisticNode.ANSWER + key + " ");
                assertThat(answer).as("the other JVM's caller gets this JVM's answer").endsWith(" receipt-" + key + "-here");
                assertThat(rows(key)).as("one business row for %s: the other JVM's rolled back", key).isEqualTo(1);
            }
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).isZero();
        } finally {
            child.destroyForcibly();
        }
        assertThat(count("select count(*) from test_payment")).isEqualTo(keys.size());
        assertThat(count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(keys.size());
    }

    private static BufferedReader reader(Process child) {
        return new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    }

    static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }
}
