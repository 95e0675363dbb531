package dev.idempotency.failover;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.cache.LocalRecordCache;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.PostgresStandbyPair;
import dev.idempotency.testing.PostgresStandbyPair.Replication;
import dev.idempotency.testing.TextCall;

import io.agroal.api.configuration.AgroalConnectionPoolConfiguration;
import io.agroal.api.exceptionsorter.PostgreSQLExceptionSorter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A database failover under load: a PostgreSQL primary with a streaming standby ({@link PostgresStandbyPair}, made by
 * the test on ports of its own), the application on the driver's multi-host URL ({@code targetServerType=primary}) and
 * a pool that validates its connections; clients call the engine with unique keys and retry each key until it is
 * answered, as a client of an idempotent API does. Mid-load the primary is killed (SIGKILL, every process) and, a
 * second later, the standby promoted; the load goes on until every client has been answered again. Then every key is
 * asked once more (a late retry) and the surviving database's business rows counted.
 *
 * <p>With asynchronous replication the test first holds the primary's WAL sender for a moment of load, so that the
 * promotion really loses a suffix of acknowledged commits (on loopback the standby otherwise keeps up within a
 * millisecond, and the run would prove nothing about the lost suffix). Figures, per claim mode and replication mode,
 * go to {@code target/failover/results.txt} and standard output.
 *
 * <p>Over 450 lines on purpose: the load, its tally and the leased claim's two failover cases share one pair of
 * servers' set-up and one way of counting, and are read together.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresFailoverTest {

    static final int CLIENTS = 8;
    /** Answers before the failure, and after the promotion at least ({@code -Dfailover.answers}: bench/failover's longer runs). */
    static final int ANSWERS = Integer.getInteger("failover.answers", 200);
    /** Short, so that a leased claim left by the dead primary is taken over within the run. */
    static final Duration LEASE = Duration.ofSeconds(3);
    static final Policy POLICY = new Policy(Duration.ofHours(1), LEASE, false, Duration.ZERO, Duration.ofSeconds(1));
    /** The store's statement bound (as {@code idempotency.connection-timeout} sets it): no call hangs on a dead server. */
    static final Duration STATEMENT_BOUND = Duration.ofSeconds(2);
    static final Path RESULTS = Path.of("target", "failover", "results.txt");

    PostgresStandbyPair pair;
    JtaEnvironment env;
    IdempotencyEngine engine;
    ExecutorService clients;

    @BeforeAll
    void available() {
        PostgresStandbyPair.assumeAvailable();
        pair = new PostgresStandbyPair(Path.of("target", "pg-failover").toAbsolutePath(), 5441);
    }

    @AfterEach
    void stop() throws Exception {
        if (clients != null) {
            clients.shutdownNow();
            clients.awaitTermination(30, TimeUnit.SECONDS);
        }
        if (env != null) {
            env.close();
            env = null;
        }
        pair.close();
    }

    void open(Replication replication) throws Exception {
        LocalCompletionSignals signals = new LocalCompletionSignals();
        open(replication, signals, RecordCache.NONE);
    }

    void open(Replication replication, LocalCompletionSignals signals, RecordCache cache) throws Exception {
        pair.start(replication);
        try (Connection c = DriverManager.getConnection(pair.url(pair.primaryPort()), PostgresStandbyPair.USER, "");
             Statement s = c.createStatement()) {
            s.execute("create table test_payment (id varchar(100) not null primary key, amount bigint not null)");
        }
        // A pool as a server's should be for a failover: a connection is checked before it is lent, and one that failed
        // fatally (its server gone) is dropped; the driver finds the primary among the URL's hosts.
        env = new JtaEnvironment(pair.url(), PostgresStandbyPair.USER, "", 24, pool -> pool
                .validateOnBorrow(true)
                .connectionValidator(AgroalConnectionPoolConfiguration.ConnectionValidator.defaultValidatorWithTimeout(1))
                .exceptionSorter(new PostgreSQLExceptionSorter()));
        JpaIdempotencyStore store = env.boundedStore(STATEMENT_BOUND, Duration.ofSeconds(1));
        engine = new IdempotencyEngine(store, Clock.systemUTC(), "app", env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), cache);
        clients = Executors.newFixedThreadPool(CLIENTS);
    }

    static Stream<Arguments> modes() {
        List<Arguments> all = new ArrayList<>();
        for (Replication replication : Replication.values()) {
            for (ClaimMode mode : List.of(ClaimMode.ATOMIC, ClaimMode.OPTIMISTIC, ClaimMode.LEASED)) {
                all.add(Arguments.of(mode, replication));
            }
        }
        return all.stream();
    }

    /**
     * The business write of one execution: a row of its own (the key and a fresh id), in the call's transaction when
     * there is one; its answer names the row, so that a key run twice answers differently.
     */
    String charge(String key) throws WorkFailed {
        String id = key + "#" + UUID.randomUUID();
        try (Connection c = env.dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
            ps.setString(1, id);
            ps.setLong(2, 100);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new WorkFailed(e);
        }
        return "receipt-" + id;
    }

    /** The payment's own insert failed (its database gone): the application's error, which reaches its caller as thrown. */
    static final class WorkFailed extends Exception {
        WorkFailed(SQLException cause) {
            super(cause);
        }
    }

    /**
     * One call of a key. Leased: inside a transaction of the caller's, which the work and the completion join (the
     * way to use leased claims whose work is transactional); atomic and optimistic: the library's own transaction.
     */
    String call(ClaimMode mode, String key) throws Exception {
        TextCall work = TextCall.of(() -> charge(key));
        if (mode != ClaimMode.LEASED) {
            return answer(engine.flow(mode).run(new ScopedKey("payments", "anonymous", key), "fp-" + key, null, POLICY, work));
        }
        return call(mode, key, work);
    }

    /** The caller's own commit (the work and, leased, the completion that joined it). */
    void commit() throws Exception {
        try {
            env.tm.commit();
        } catch (jakarta.transaction.RollbackException | jakarta.transaction.HeuristicMixedException
                 | jakarta.transaction.HeuristicRollbackException e) {
            throw new CallersCommitFailed(e);
        }
    }

    /** The caller's own transaction did not commit (its database gone): the application's error, not the library's. */
    static final class CallersCommitFailed extends Exception {
        CallersCommitFailed(Exception cause) {
            super(cause);
        }
    }

    static String answer(AtomicOutcome<String> outcome) {
        return outcome instanceof AtomicOutcome.Ran<String> ran ? ran.value()
                : new String(((AtomicOutcome.Replayed<String>) outcome).record().response(), StandardCharsets.UTF_8);
    }

    /** What one run saw. */
    static final class Tally {
        final Map<String, String> firstAnswers = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        final AtomicLong killedAt = new AtomicLong();
        final AtomicLong firstAnswerAfterKill = new AtomicLong();
        final AtomicLong slowestCall = new AtomicLong();
        final AtomicInteger neverAnswered = new AtomicInteger();

        final Map<String, Throwable> samples = new ConcurrentHashMap<>();

        void error(Throwable e) {
            String name = e instanceof IdempotencyInProgressException ? "in progress"
                    : e instanceof IdempotencyStoreException ? "store unavailable"
                    : e instanceof WorkFailed ? "the work's own error"
                    : e instanceof CallersCommitFailed ? "the caller's commit failed" : e.getClass().getName();
            errors.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
            samples.putIfAbsent(name, e);
        }
    }

    /**
     * A client: takes keys one after the other and calls each until it is answered (pausing 50 ms between tries, as a
     * client's retry policy does), until told to stop; a key still unanswered 60 s after its first try is never answered.
     */
    Runnable client(ClaimMode mode, String prefix, int id, AtomicBoolean stop, Tally tally, AtomicInteger answersAfterKill) {
        return () -> {
            for (int n = 0; !stop.get(); n++) {
                String key = prefix + "-c" + id + "-" + n;
                long first = System.nanoTime();
                while (true) {
                    long started = System.nanoTime();
                    try {
                        String answer = call(mode, key);
                        tally.slowestCall.accumulateAndGet(System.nanoTime() - started, Math::max);
                        tally.firstAnswers.put(key, answer);
                        long killed = tally.killedAt.get();
                        if (killed != 0 && started > killed) {
                            tally.firstAnswerAfterKill.compareAndSet(0, System.nanoTime() - killed);
                            answersAfterKill.incrementAndGet();
                        }
                        break;
                    } catch (Exception e) {
                        tally.slowestCall.accumulateAndGet(System.nanoTime() - started, Math::max);
                        tally.error(e);
                        if (System.nanoTime() - first > TimeUnit.SECONDS.toNanos(60) || Thread.currentThread().isInterrupted()) {
                            tally.neverAnswered.incrementAndGet();
                            return;
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the client's pause between tries
                    }
                }
            }
        };
    }

    /** How the primary fails. */
    enum PrimaryFailure {
        /** Killed: its connections are reset, new ones refused. */
        KILLED,
        /**
         * Silent (stopped, as a frozen or cut-off machine): its connections hang and new ones are taken and never
         * answered, so each one waits for the driver's timeouts ({@code socketTimeout}, {@code loginTimeout}).
         */
        SILENT
    }

    @ParameterizedTest(name = "{0} claims, {1} replication")
    @MethodSource("modes")
    void aFailoverUnderLoadRunsNoKeyTwiceAndAnswersEveryClient(ClaimMode mode, Replication replication) throws Exception {
        failOverUnderLoad(mode, replication, PrimaryFailure.KILLED);
    }

    /**
     * The primary goes silent instead of dying: calls on its connections wait for the driver's socket timeout (10 s in
     * the URL), not the statement bound (the server that would enforce it is stopped), and new connections for the
     * login timeout before the driver tries the next host. Every client is still answered, with no call slower than the
     * socket timeout and the bound, and nothing runs twice.
     */
    @Test
    void aSilentPrimaryIsLeftWithinTheSocketTimeoutAndEveryClientIsAnswered() throws Exception {
        failOverUnderLoad(ClaimMode.ATOMIC, Replication.SYNCHRONOUS, PrimaryFailure.SILENT);
    }

    void failOverUnderLoad(ClaimMode mode, Replication replication, PrimaryFailure failure) throws Exception {
        open(replication);
        String prefix = mode.name().toLowerCase() + "-" + replication.name().toLowerCase() + "-" + failure.name().toLowerCase();
        Tally tally = new Tally();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger answersAfterKill = new AtomicInteger();
        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            running.add(clients.submit(client(mode, prefix, c, stop, tally, answersAfterKill)));
        }
        awaitAnswers(tally.firstAnswers::size, ANSWERS, "answers before the failover");
        int beforeHold = tally.firstAnswers.size();
        if (replication == Replication.ASYNCHRONOUS) {
            pair.holdReplication(); // the standby falls behind: what is committed from now on is lost with the primary
            awaitAnswers(tally.firstAnswers::size, beforeHold + ANSWERS / 2, "answers the standby does not get");
        }
        if (failure == PrimaryFailure.KILLED) {
            pair.killPrimary();
        } else {
            pair.silencePrimary();
        }
        tally.killedAt.set(System.nanoTime());
        long killed = System.nanoTime();
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1)); // the failover's detection time, as a cluster manager takes it
        pair.promote();
        long promoted = System.nanoTime() - killed;
        // Every client answered again after the promotion, and a leased claim the dead primary left taken over
        awaitAnswers(answersAfterKill::get, Math.max(CLIENTS * 20, ANSWERS), "answers after the promotion");
        LockSupport.parkNanos(LEASE.plusSeconds(1).toNanos()); // the load goes on past the lease of a claim left behind
        stop.set(true);
        for (Future<?> f : running) {
            f.get(90, TimeUnit.SECONDS);
        }

        // A late retry of every answered key, on the new primary: the first answer again exactly when the business row
        // it names survived the promotion; else (its commit lost) the work run once more, and a new answer
        java.util.Set<String> surviving = businessRowIds();
        int changed = 0;
        int lateErrors = 0;
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(tally.firstAnswers).entrySet()) {
            boolean kept = surviving.contains(e.getValue().substring("receipt-".length()));
            try {
                String late = call(mode, e.getKey());
                if (!late.equals(e.getValue())) {
                    changed++;
                }
                if (late.equals(e.getValue()) != kept) {
                    wrong.add(e.getKey() + ": first " + e.getValue() + (kept ? " (its row kept)" : " (its row lost)") + ", late " + late);
                }
            } catch (Exception ex) {
                lateErrors++;
            }
        }
        Map<String, Integer> rows = businessRowsPerKey();
        long twice = rows.values().stream().filter(n -> n > 1).count();
        long unanswered = rows.keySet().stream().filter(k -> !tally.firstAnswers.containsKey(k)).count();
        String line = String.format(java.util.Locale.ROOT,
                "%-10s %-12s %-6s keys answered %5d | charged twice %d | answer changed on a late retry %3d | late retries refused %d"
                        + " | never answered %d | promotion %4d ms after the failure | first answer %5d ms after the failure"
                        + " | slowest call %5d ms | errors meanwhile %s",
                mode, replication, failure, tally.firstAnswers.size(), twice, changed, lateErrors, tally.neverAnswered.get(),
                TimeUnit.NANOSECONDS.toMillis(promoted), TimeUnit.NANOSECONDS.toMillis(tally.firstAnswerAfterKill.get()),
                TimeUnit.NANOSECONDS.toMillis(tally.slowestCall.get()), new TreeMap<>(tally.errors));
        record(line);
        tally.samples.forEach((name, e) -> {
            if (name.contains(".")) {
                e.printStackTrace(System.out);
            }
        });

        assertThat(twice).as("keys charged twice in the surviving database").isZero();
        assertThat(wrong).as("late retries answered the first answer exactly when its commit survived").isEmpty();
        assertThat(tally.neverAnswered.get()).as("clients never answered").isZero();
        assertThat(lateErrors).as("late retries refused").isZero();
        assertThat(tally.errors.keySet()).as("what callers got during the failover: the library's named answers only")
                .isSubsetOf("in progress", "store unavailable", "the work's own error", "the caller's commit failed");
        assertThat(unanswered).as("rows of a key no client was answered for (a call in flight at the kill)").isLessThanOrEqualTo(CLIENTS);
        // A dead server's connections fail at once; a silent one's wait for the driver's socket timeout
        long bound = 2 * STATEMENT_BOUND.toSeconds() + 2 + (failure == PrimaryFailure.SILENT ? PostgresStandbyPair.SOCKET_TIMEOUT_SECONDS : 0);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(tally.slowestCall.get())).as("no call waits much longer than the statement bound"
                + (failure == PrimaryFailure.SILENT ? " and the socket timeout" : "")).isLessThanOrEqualTo(bound);
        if (replication == Replication.SYNCHRONOUS) {
            assertThat(changed).as("with synchronous replication every answer survives the failover").isZero();
            assertThat(surviving).as("every answered call's row survives").hasSizeGreaterThanOrEqualTo(tally.firstAnswers.size());
        } else {
            assertThat(changed).as("with asynchronous replication the held-back commits are lost: their keys run again, once")
                    .isPositive();
        }
    }

    /**
     * The leased claim's gap, and its remedy. A leased claim commits the claim first; work that commits in a
     * transaction of its own (here: no transaction of the caller's, the write commits at once) is followed by the
     * completion in another. A primary that dies with the completion's commit not yet on the standby (asynchronous
     * replication, the WAL sender held from the moment the work committed) leaves the promoted standby with the claim and
     * the work but no answer: once the lease ends, the retry takes the claim over and runs the work again. The work
     * inside the caller's transaction, which the completion joins, closes it: the standby has the work and its answer
     * together, or neither.
     */
    @Test
    void aLeasedClaimWhoseWorkCommitsApartFromItsCompletionRunsAgainAfterALossyFailoverAndOneThatJoinsItDoesNot() throws Exception {
        open(Replication.ASYNCHRONOUS);
        ScopedKey apart = new ScopedKey("payments", "anonymous", "apart");
        AtomicBoolean held = new AtomicBoolean();
        TextCall work = TextCall.of(() -> {
            String receipt = charge("apart");
            if (held.compareAndSet(false, true)) {
                pair.holdReplication(); // the work's commit is on the standby; nothing after it will be
            }
            return receipt;
        });
        String first = answer(engine.flow(ClaimMode.LEASED).run(apart, "fp", null, POLICY, work));
        failOver();
        String retry = retryPastTheLease(() -> answer(engine.flow(ClaimMode.LEASED).run(apart, "fp", null, POLICY, work)));
        assertThat(businessRowsPerKey().get("apart")).as("the work ran again: its completion was lost with the primary").isEqualTo(2);
        assertThat(retry).isNotEqualTo(first);
        record("LEASED     ASYNCHRONOUS the work committed apart from its completion, which the failover lost: charged twice"
                + " (the retry took the claim over after its " + LEASE.toSeconds() + " s lease)");

        // The remedy: the work joins the caller's transaction, and the completion commits with it
        pair.close();
        env.close();
        env = null;
        open(Replication.ASYNCHRONOUS);
        held.set(false);
        TextCall joined = TextCall.of(() -> {
            String receipt = charge("joined");
            if (held.compareAndSet(false, true)) {
                pair.holdReplication(); // nothing of the transaction's commit reaches the standby
            }
            return receipt;
        });
        String joinedFirst = call(ClaimMode.LEASED, "joined", joined);
        failOver();
        String joinedRetry = retryPastTheLease(() -> call(ClaimMode.LEASED, "joined", joined));
        assertThat(businessRowsPerKey().get("joined")).as("the work and its answer were lost together; the retry ran it once")
                .isEqualTo(1);
        assertThat(joinedRetry).as("an acknowledged commit the failover lost: the retry ran the work, once").isNotEqualTo(joinedFirst);
        record("LEASED     ASYNCHRONOUS the work in the caller's transaction with its completion: lost together, run once");
    }

    /**
     * Synchronous replication loses no completion that returned, but cannot help a leased claim whose primary dies
     * between its work's commit and its completion: the completion fails (the caller is told the store is unavailable),
     * the promoted standby has the claim and the work, and the retry after the lease runs the work again, as after any
     * store outage at that moment. The work in the caller's transaction, with the completion, is again the remedy: the
     * primary dying before that one commit leaves neither.
     */
    @Test
    void aLeasedClaimWhoseWorkCommitsApartRunsAgainWhenThePrimaryDiesBeforeItsCompletionEvenWithSynchronousReplication() throws Exception {
        open(Replication.SYNCHRONOUS);
        AtomicBoolean killed = new AtomicBoolean();
        TextCall apart = TextCall.of(() -> {
            String receipt = charge("sync-apart");
            if (killed.compareAndSet(false, true)) {
                pair.killPrimary(); // the work committed (and replicated); the completion has no primary to go to
            }
            return receipt;
        });
        ScopedKey key = new ScopedKey("payments", "anonymous", "sync-apart");
        try {
            engine.flow(ClaimMode.LEASED).run(key, "fp", null, POLICY, apart);
            throw new AssertionError("the completion went nowhere, yet the call was answered");
        } catch (IdempotencyStoreException expected) {
            // the caller is told the store is unavailable; its retry comes
        }
        pair.promote();
        retryPastTheLease(() -> answer(engine.flow(ClaimMode.LEASED).run(key, "fp", null, POLICY, apart)));
        assertThat(businessRowsPerKey().get("sync-apart")).as("the work ran again after the lease").isEqualTo(2);
        record("LEASED     SYNCHRONOUS  the primary died between the work's own commit and the completion: charged twice"
                + " (as after any store outage at that moment)");

        pair.close();
        env.close();
        env = null;
        open(Replication.SYNCHRONOUS);
        killed.set(false);
        TextCall joined = TextCall.of(() -> {
            String receipt = charge("sync-joined");
            if (killed.compareAndSet(false, true)) {
                pair.killPrimary(); // before the one commit of the work and its completion
            }
            return receipt;
        });
        try {
            call(ClaimMode.LEASED, "sync-joined", joined);
            throw new AssertionError("the commit went nowhere, yet the call was answered");
        } catch (CallersCommitFailed | IdempotencyStoreException expected) {
            // the caller's transaction could not commit
        }
        pair.promote();
        retryPastTheLease(() -> call(ClaimMode.LEASED, "sync-joined", joined));
        assertThat(businessRowsPerKey().get("sync-joined")).as("nothing of the first call committed; the retry ran it once").isEqualTo(1);
        record("LEASED     SYNCHRONOUS  the primary died before the commit of the work with its completion: run once");
    }

    /**
     * The cache is written when a claim commits, so an asynchronous promotion that loses a commit leaves the cache
     * holding its answer: a retry is answered from the cache with a payment the surviving database does not have, until
     * the cache is emptied (as the guide says to do after such a failover). Then the retry finds no record and runs the
     * work, once.
     */
    @Test
    void anAnswerCachedFromACommitTheFailoverLostIsReplayedUntilTheCacheIsFlushedThenRunOnce() throws Exception {
        LocalCompletionSignals signals = new LocalCompletionSignals();
        open(Replication.ASYNCHRONOUS, signals, new LocalRecordCache(1000, Clock.systemUTC(), signals));
        pair.holdReplication(); // the standby gets nothing committed from now on
        String first = call(ClaimMode.ATOMIC, "cached");
        failOver();

        String fromTheCache = retryPastTheLease(() -> call(ClaimMode.ATOMIC, "cached"));
        assertThat(fromTheCache).as("the cache still answers the lost commit's answer").isEqualTo(first);
        assertThat(businessRowsPerKey()).as("whose payment the promoted standby does not have").doesNotContainKey("cached");

        engine.flushCache();
        String afterTheFlush = retryPastTheLease(() -> call(ClaimMode.ATOMIC, "cached"));
        assertThat(afterTheFlush).as("the cache emptied, the retry finds no record and runs the work").isNotEqualTo(first);
        assertThat(businessRowsPerKey().get("cached")).as("once").isEqualTo(1);
        assertThat(call(ClaimMode.ATOMIC, "cached")).as("and its answer is the key's from now on").isEqualTo(afterTheFlush);
        record("ATOMIC     ASYNCHRONOUS a cached answer of a commit the failover lost: replayed from the cache until it was"
                + " flushed; then run once");
    }

    /** One call of a key inside a transaction of the caller's, which the work and (leased) the completion join. */
    String call(ClaimMode mode, String key, TextCall work) throws Exception {
        env.tm.begin();
        try {
            String answer = answer(engine.flow(mode).run(new ScopedKey("payments", "anonymous", key), "fp-" + key, null, POLICY, work));
            commit();
            return answer;
        } catch (Exception | Error e) {
            if (env.tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
                env.tm.rollback();
            }
            throw e;
        }
    }

    void failOver() throws Exception {
        pair.killPrimary();
        pair.promote();
    }

    /** Retries until answered (in progress while the dead primary's claim holds its lease), for 30 s at most. */
    String retryPastTheLease(java.util.concurrent.Callable<String> retry) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return retry.call();
            } catch (IdempotencyInProgressException | IdempotencyStoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // the client's pause between tries
            }
        }
    }

    void awaitAnswers(java.util.function.IntSupplier count, int atLeast, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count.getAsInt() < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": " + count.getAsInt() + " within 60 s, not " + atLeast);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // watching the load's progress
        }
    }

    /** The business rows' ids (key#run), in the surviving database (the promoted standby). */
    java.util.Set<String> businessRowIds() throws SQLException {
        java.util.Set<String> ids = new java.util.HashSet<>();
        try (Connection c = DriverManager.getConnection(pair.url(pair.standbyPort()), PostgresStandbyPair.USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select id from test_payment")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }

    /** Business rows per key, in the surviving database (the promoted standby). */
    Map<String, Integer> businessRowsPerKey() throws SQLException {
        Map<String, Integer> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(pair.url(pair.standbyPort()), PostgresStandbyPair.USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select split_part(id, '#', 1), count(*) from test_payment group by 1")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        }
        return rows;
    }

    static void record(String line) throws java.io.IOException {
        System.out.println("FAILOVER " + line);
        Files.createDirectories(RESULTS.getParent());
        Files.writeString(RESULTS, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
