package dev.idempotency.atomic;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.CountingDriver;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TextCall;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
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
import java.util.List;
import java.util.Map;
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
 * Atomic claims through the engine and the JPA store, with a real JTA stack (Narayana, an
 * Agroal pool enlisting in it, Hibernate): one transaction for the claim, the business write and the stored
 * result; duplicates that wait for it or are told it is in progress; rollbacks and a killed JVM that leave
 * no trace. Run on H2, PostgreSQL and MariaDB by the subclasses.
 */
abstract class AtomicClaimContract {

    static final Duration LEASE = Duration.ofMinutes(5);
    static final Policy WAIT = new Policy(Duration.ofHours(1), LEASE, true, Duration.ofSeconds(60), Duration.ofSeconds(1));
    static final Policy REJECT = new Policy(Duration.ofHours(1), LEASE, false, Duration.ZERO, Duration.ofSeconds(1));

    abstract TestDatabase database();

    /** The JDBC URL the tests and the crashing JVM share (H2: a TCP server, so that another JVM reaches it). */
    String url() {
        return database().url;
    }

    /**
     * Whether the store runs its hot statements in plain JDBC on the transaction's connection (its own unit's data
     * source, the default in a server) or everything through JPA (an application's unit).
     */
    boolean jdbcHotPath() {
        return true;
    }

    /** The statements a first request's claim costs on this database (before the business write). */
    abstract List<String> claimStatements();

    JtaEnvironment env;
    LocalCompletionSignals signals;
    IdempotencyEngine engine;
    /** Four nodes on one database (each its own engine, so its own view of the claims it holds): racers spread over them meet in the database. */
    final List<IdempotencyEngine> nodes = new ArrayList<>();
    ExecutorService pool;
    final AtomicInteger executions = new AtomicInteger();

    @BeforeEach
    void start() throws SQLException {
        database().assumeAvailable();
        reset(url(), database());
        env = new JtaEnvironment(url(), database().user, database().password, Map.of(), 20, true, jdbcHotPath());
        signals = new LocalCompletionSignals();
        engine = new IdempotencyEngine(env.store, Clock.systemUTC(), "node-a", env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE);
        pool = Executors.newCachedThreadPool();
        nodes.add(engine);
        for (String node : List.of("node-b", "node-c", "node-d")) {
            nodes.add(new IdempotencyEngine(env.store, Clock.systemUTC(), node, env.bridge(), new LocalCompletionSignals(),
                    Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE));
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (env != null && env.tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
            env.tm.rollback(); // a failed test's transaction must not stay on the thread for the next one
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        if (env != null) {
            env.close();
        }
    }

    static void reset(String url, TestDatabase db) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, db.user, db.password); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS test_payment");
            s.execute("CREATE TABLE test_payment (id VARCHAR(100) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL)");
        }
    }

    // ------------------------------------------------------------------------------------------- helpers

    /** The business write: one row per execution, in the transaction of the call. */
    static String charge(javax.sql.DataSource ds, String key, int execution) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
            ps.setString(1, key + "#" + execution);
            ps.setLong(2, 100);
            ps.executeUpdate();
        }
        return "receipt-" + key;
    }

    String charge(String key) throws SQLException {
        return charge(env.dataSource, key, executions.incrementAndGet());
    }

    AtomicOutcome<String> call(String key, Policy policy, Callable<String> body) throws Exception {
        return call(engine, key, policy, body);
    }

    static AtomicOutcome<String> call(IdempotencyEngine engine, String key, Policy policy, Callable<String> body) throws Exception {
        return engine.runAtomic(new ScopedKey("payments", "anonymous", key), "fp-" + key, null, policy, TextCall.of(body));
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

    static void awaitUntil(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
            Thread.onSpinWait();
        }
    }

    // --------------------------------------------------------------------------------------------- tests

    @Test
    void aFirstRequestIsTheClaimTheBusinessWriteTheCompletionAndOneCommit() throws Exception {
        CountingDriver.reset();
        AtomicOutcome<String> first = call("k-1", REJECT, () -> charge("k-1"));
        List<String> statements = CountingDriver.statements();
        int commits = CountingDriver.commits();

        assertThat(first).isEqualTo(new AtomicOutcome.Ran<>("receipt-k-1"));
        List<String> expected = new ArrayList<>(claimStatements());
        expected.add("insert into test_payment");
        expected.add("UPDATE idempotency_record SET status");
        assertThat(statements).hasSize(expected.size());
        for (int i = 0; i < expected.size(); i++) {
            assertThat(statements.get(i)).as("statement %d of %s", i + 1, statements).startsWithIgnoringCase(expected.get(i));
        }
        assertThat(commits).as("one commit").isEqualTo(1);
        assertThat(CountingDriver.rollbacks()).isZero();

        AtomicOutcome<String> retry = call("k-1", REJECT, () -> charge("k-1"));
        assertThat(retry).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(new String(((AtomicOutcome.Replayed<String>) retry).record().response(), StandardCharsets.UTF_8)).isEqualTo("receipt-k-1");
        assertThat(executions).hasValue(1);
        assertThat(rows("k-1")).isEqualTo(1);
    }

    @Test
    void insideTheCallersTransactionTheClaimJoinsItAndNothingShowsBeforeItsCommit() throws Exception {
        CountingDriver.reset();
        env.tm.begin();
        call("k-2", REJECT, () -> charge("k-2"));
        assertThat(count("select count(*) from idempotency_record")).as("invisible before the commit").isZero();
        env.tm.commit();
        assertThat(CountingDriver.statements()).hasSize(claimStatements().size() + 2);
        assertThat(CountingDriver.commits()).isEqualTo(1);
        assertThat(count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);

        env.tm.begin();
        call("k-3", REJECT, () -> charge("k-3"));
        env.tm.rollback();
        assertThat(count("select count(*) from idempotency_record")).as("a rollback leaves no trace").isEqualTo(1);
        assertThat(call("k-3", REJECT, () -> charge("k-3"))).isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(rows("k-3")).isEqualTo(1);
    }

    @Test
    void anExceptionRollsBackTheWorkAndTheClaimAndTheRetryRunsAtOnce() throws Exception {
        assertThatThrownBy(() -> call("k-4", REJECT, () -> {
            charge("k-4");
            throw new IllegalStateException("gateway down");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(rows("k-4")).isZero();
        assertThat(count("select count(*) from idempotency_record")).isZero();
        assertThat(call("k-4", REJECT, () -> charge("k-4"))).isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(rows("k-4")).isEqualTo(1);
    }

    @Test
    void thirtyTwoRacersThatWaitRunOnceAndTheOthersReplay() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger entered = new AtomicInteger();
        List<Future<AtomicOutcome<String>>> results = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            IdempotencyEngine node = nodes.get(i % nodes.size());
            results.add(pool.submit(() -> {
                entered.incrementAndGet();
                return call(node, "race", WAIT, () -> {
                    String receipt = charge("race");
                    release.await(60, TimeUnit.SECONDS);
                    return receipt;
                });
            }));
        }
        awaitUntil("32 callers entered", () -> entered.get() == 32);
        release.countDown();
        int ran = 0;
        int replayed = 0;
        for (Future<AtomicOutcome<String>> f : results) {
            AtomicOutcome<String> outcome = f.get(120, TimeUnit.SECONDS);
            if (outcome instanceof AtomicOutcome.Ran) {
                ran++;
            } else {
                replayed++;
            }
        }
        assertThat(ran).isEqualTo(1);
        assertThat(replayed).isEqualTo(31);
        assertThat(executions).hasValue(1);
        assertThat(rows("race")).isEqualTo(1);
    }

    @Test
    void thirtyTwoRacersThatRejectRunOnceAndAreAnsweredWithinTheBound() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger entered = new AtomicInteger();
        List<Future<Object>> results = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            IdempotencyEngine node = nodes.get(i % nodes.size());
            results.add(pool.submit(() -> {
                entered.incrementAndGet();
                long started = System.nanoTime();
                try {
                    return call(node, "reject", REJECT, () -> {
                        String receipt = charge("reject");
                        release.await(60, TimeUnit.SECONDS);
                        return receipt;
                    });
                } catch (IdempotencyInProgressException e) {
                    // A correctness bound with generous slack: the claim lock timeout is 1 s (H2's own lock timeout
                    // is 10 s here, so this also shows the claim's bound is the library's, not the database's).
                    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
                    assertThat(e.retryAfter()).isPositive();
                    return e;
                }
            }));
        }
        awaitUntil("32 callers entered", () -> entered.get() == 32);
        // Release the first once every other caller has been answered or is waiting on the database.
        awaitUntil("31 callers answered", () -> results.stream().filter(Future::isDone).count() >= 31
                || database().sessionsWaitingForALock() + results.stream().filter(Future::isDone).count() >= 31);
        release.countDown();
        int ran = 0;
        int other = 0;
        for (Future<Object> f : results) {
            Object outcome = f.get(120, TimeUnit.SECONDS);
            if (outcome instanceof AtomicOutcome.Ran) {
                ran++;
            } else {
                assertThat(outcome).isInstanceOfAny(AtomicOutcome.Replayed.class, IdempotencyInProgressException.class);
                other++;
            }
        }
        assertThat(ran).isEqualTo(1);
        assertThat(other).isEqualTo(31);
        assertThat(executions).hasValue(1);
        assertThat(rows("reject")).isEqualTo(1);
    }

    @Test
    void whenTheFirstRollsBackWhileDuplicatesWaitExactlyOneOfThemRunsAndTheRestReplay() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger entered = new AtomicInteger();
        AtomicInteger attempt = new AtomicInteger();
        List<Future<Object>> results = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            IdempotencyEngine node = nodes.get(i % nodes.size());
            results.add(pool.submit(() -> {
                entered.incrementAndGet();
                try {
                    return call(node, "rollback", WAIT, () -> {
                        String receipt = charge("rollback");
                        if (attempt.incrementAndGet() == 1) {
                            release.await(60, TimeUnit.SECONDS);
                            throw new IllegalStateException("the first fails after its write");
                        }
                        return receipt;
                    });
                } catch (IllegalStateException e) {
                    return e;
                }
            }));
        }
        awaitUntil("16 callers entered", () -> entered.get() == 16);
        release.countDown();
        int failed = 0;
        int ran = 0;
        int replayed = 0;
        for (Future<Object> f : results) {
            Object outcome = f.get(120, TimeUnit.SECONDS);
            if (outcome instanceof IllegalStateException) {
                failed++;
            } else if (outcome instanceof AtomicOutcome.Ran) {
                ran++;
            } else {
                replayed++;
            }
        }
        assertThat(failed).isEqualTo(1);
        assertThat(ran).as("exactly one duplicate runs after the rollback").isEqualTo(1);
        assertThat(replayed).isEqualTo(14);
        assertThat(executions).hasValue(2);
        assertThat(rows("rollback")).as("the rolled back write is gone").isEqualTo(1);
    }

    /** A failure the method keeps, thrown as its answer. */
    static final class Declined extends Exception {
        Declined(String message) {
            super(message);
        }
    }

    /**
     * A failure the method keeps, in the library's transaction, while a duplicate on another node waits for the key's
     * row: the transaction rolls back (the work with it) before the failure can be stored, and the waiting duplicate
     * takes the key in that moment, runs and commits. Its answer is then the key's, and the first caller is answered with
     * it too, never handed the failure that no retry would get (which it was before).
     */
    @Test
    void aKeptFailureThatLosesTheKeyToAWaitingDuplicateIsNotHandedToItsCaller() throws Exception {
        ScopedKey key = new ScopedKey("payments", "anonymous", "kept");
        // The duplicate waits for the row up to 30 s: still waiting when the first's transaction rolls back.
        Policy patient = new Policy(Duration.ofHours(1), LEASE, true, Duration.ofSeconds(60), Duration.ofSeconds(30));
        java.util.concurrent.atomic.AtomicReference<Future<AtomicOutcome<String>>> duplicate = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicOutcome<String> first = engine.runAtomic(key, "fp-kept", null, WAIT, TextCall.keeping(Declined.class, () -> {
            charge("kept");
            duplicate.set(pool.submit(() -> call(nodes.get(1), "kept", patient, () -> charge("kept"))));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (count(lockWaits()) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the duplicate did not wait for the key's row within 30 s: " + sessions());
                }
                assertThat(duplicate.get().isDone()).as("the duplicate is still waiting").isFalse();
                Thread.onSpinWait();
            }
            throw new Declined("card declined");
        }));
        assertThat(duplicate.get().get(60, TimeUnit.SECONDS)).as("the waiting duplicate ran").isInstanceOf(AtomicOutcome.Ran.class);
        assertThat(first).as("the first caller gets the key's answer, not its failure").isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(new String(((AtomicOutcome.Replayed<String>) first).record().response(), StandardCharsets.UTF_8))
                .isEqualTo("receipt-kept");
        assertThat(rows("kept")).as("the duplicate's work alone committed").isEqualTo(1);
        assertThat(call("kept", REJECT, () -> charge("kept"))).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(executions).hasValue(2);
    }

    /** The database's sessions, for a failure's message. */
    private String sessions() {
        String sql = switch (database()) {
            case H2 -> "select session_id, executing_statement from information_schema.sessions";
            case POSTGRES -> "select pid, wait_event_type, query from pg_stat_activity";
            case MARIADB -> "select id, state, info from information_schema.processlist";
        };
        StringBuilder b = new StringBuilder();
        try (Connection c = DriverManager.getConnection(url(), database().user, database().password);
             Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                b.append("\n  ").append(rs.getString(1)).append(" | ").append(rs.getString(2)).append(" | ").append(rs.getString(3));
            }
        } catch (SQLException e) {
            b.append(e);
        }
        return b.toString();
    }

    /** The sessions waiting for a row lock, as this database reports them. */
    private String lockWaits() {
        return switch (database()) {
            // H2 names no blocker for an insert that waits on another transaction's row: its statement is seen running
            case H2 -> "select count(*) from information_schema.sessions where session_id <> session_id()"
                    + " and executing_statement like '%idempotency_record%'";
            case POSTGRES -> "select count(*) from pg_stat_activity where wait_event_type = 'Lock'";
            // InnoDB does not always list an INSERT IGNORE that waits as a lock wait: its statement is seen running
            case MARIADB -> "select count(*) from information_schema.processlist where id <> connection_id()"
                    + " and info like '%INTO idempotency_record%'";
        };
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
    void fiftyDuplicatesOfASlowCallWaitWithoutHoldingConnectionsFromAPoolOfTwenty() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch firstRunning = new CountDownLatch(1);
        Future<AtomicOutcome<String>> first = pool.submit(() -> call("slow", WAIT, () -> {
            String receipt = charge("slow");
            firstRunning.countDown();
            release.await(60, TimeUnit.SECONDS);
            return receipt;
        }));
        assertThat(firstRunning.await(60, TimeUnit.SECONDS)).isTrue();
        List<Future<AtomicOutcome<String>>> duplicates = new ArrayList<>();
        for (int i = 0; i < 49; i++) {
            duplicates.add(pool.submit(() -> call("slow", WAIT, () -> charge("slow"))));
        }
        awaitUntil("49 duplicates waiting", () -> signals.waiters() >= 49);
        assertThat(env.dataSource.getMetrics().maxUsedCount()).as("connections used while 49 duplicates wait").isEqualTo(1);
        release.countDown();
        assertThat(first.get(60, TimeUnit.SECONDS)).isInstanceOf(AtomicOutcome.Ran.class);
        for (Future<AtomicOutcome<String>> f : duplicates) {
            assertThat(f.get(120, TimeUnit.SECONDS)).isInstanceOf(AtomicOutcome.Replayed.class);
        }
        assertThat(executions).hasValue(1);
        assertThat(env.dataSource.getMetrics().invalidCount()).isZero();
    }

    @Test
    void aJvmKilledAfterItsBusinessWriteAndBeforeItsCommitLeavesNothingAndTheRetryRunsAtOnce() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-Xmx256m",
                "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-crash",
                "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-crash",
                "-cp", System.getProperty("java.class.path"), AtomicCrashNode.class.getName(),
                url(), database().user, database().password, "crash");
        pb.redirectErrorStream(true);
        Process child = pb.start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder log = new StringBuilder();
            for (String line; (line = out.readLine()) != null; ) {
                log.append(line).append('\n');
                if (line.equals(AtomicCrashNode.WROTE)) {
                    break;
                }
            }
            assertThat(log.toString()).as("the child wrote its business row").contains(AtomicCrashNode.WROTE);
            child.destroyForcibly(); // SIGKILL: between the business write and the commit
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            child.destroyForcibly();
        }
        long started = System.nanoTime();
        assertThat(call("crash", WAIT, () -> charge("crash"))).as("the retry runs").isInstanceOf(AtomicOutcome.Ran.class);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(took).as("no lease to wait out (the lease is %s)", LEASE).isLessThan(Duration.ofSeconds(30));
        assertThat(rows("crash")).as("one business row").isEqualTo(1);
        assertThat(call("crash", WAIT, () -> charge("crash"))).isInstanceOf(AtomicOutcome.Replayed.class);
        assertThat(executions).hasValue(1);
    }
}
