package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;
import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.OnConcurrent;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A duplicate that waits inside its caller's transaction for the first call's uncommitted claim, on another node (a
 * second container: on one node the duplicate waits for this node's own claim without a statement), longer than the
 * store's statement bound (here 2 s: {@code idempotency.connection-timeout} and the lock timeouts made short), as a consumer's
 * duplicate does for up to 5 minutes: it is answered with the first call's result once that commits, not cut off by the
 * driver's network timeout after the bound (which dropped its connection before, failing the call; a consumer's
 * record was then refused). On PostgreSQL and MariaDB, whose drivers honour the network timeout.
 */
class LongWaitInTransactionTest {

    static final Duration STATEMENT_BOUND = Duration.ofSeconds(2);

    /** The first call holds its transaction (after its write and its claim) until released. */
    @ApplicationScoped
    public static class Bookings {
        final AtomicInteger executions = new AtomicInteger();
        final CountDownLatch written = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        /** Waits until the first call wrote and holds its transaction. */
        public boolean awaitWritten() throws InterruptedException {
            return written.await(30, TimeUnit.SECONDS);
        }

        /** Lets the first call commit. */
        public void release() {
            release.countDown();
        }

        public int executions() {
            return executions.get();
        }

        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Transactional
        @Idempotent(onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT30S")
        public String book(@IdempotencyKey String key, String what) throws Exception {
            executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 1)")) {
                ps.setString(1, what);
                ps.executeUpdate();
            }
            written.countDown();
            assertThat(release.await(60, TimeUnit.SECONDS)).as("released").isTrue();
            return "booked " + what;
        }
    }

    WeldContainer container;
    WeldContainer other;
    TestDatabase database;
    final ExecutorService threads = Executors.newFixedThreadPool(2);

    void boot(TestDatabase db, String claim) {
        database = db;
        db.assumeAvailable();
        db.reset();
        JtaInterceptorContract.current = db;
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.claim", claim);
        config.put("idempotency.connection-timeout", "PT2S");
        config.put("idempotency.lock-timeout", "PT1S");
        config.put("idempotency.claim-lock-timeout", "PT1S");
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, Bookings.class)
                .containerId("first-node")
                .addExtension(new TransactionExtension())
                .initialize();
        other = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class, Bookings.class)
                .containerId("second-node")
                .addExtension(new TransactionExtension())
                .initialize();
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.select(Bookings.class).get().release();
            container.close();
        }
        if (other != null) {
            other.select(Bookings.class).get().release();
            other.close();
        }
        threads.shutdownNow();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"POSTGRES", "MARIADB"})
    void aDuplicateThatWaitsLongerThanTheStatementBoundIsAnsweredNotCutOff(String db) throws Exception {
        boot(TestDatabase.valueOf(db), "atomic");
        Bookings bookings = container.select(Bookings.class).get();
        Future<String> first = threads.submit(() -> bookings.book("k-1", "first"));
        assertThat(bookings.awaitWritten()).as("the first call wrote and holds its transaction").isTrue();
        long started = System.nanoTime();
        Bookings onTheOtherNode = other.select(Bookings.class).get();
        Future<String> duplicate = threads.submit(() -> onTheOtherNode.book("k-1", "first"));
        awaitLockWaiter(duplicate);
        // The duplicate waits on the first's uncommitted claim: held for the statement bound and 2 s more.
        long hold = STATEMENT_BOUND.plusSeconds(2).toNanos() - (System.nanoTime() - started);
        if (hold > 0) {
            TimeUnit.NANOSECONDS.sleep(hold); // the time passing is what is tested: longer than the statement bound
        }
        assertThat(duplicate.isDone()).as("the duplicate still waits, past the statement bound").isFalse();
        bookings.release();
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("booked first");
        assertThat(duplicate.get(30, TimeUnit.SECONDS)).as("the duplicate answered with the first's result").isEqualTo("booked first");
        assertThat(bookings.executions() + onTheOtherNode.executions()).as("run once").isEqualTo(1);
        assertThat(database.count("select count(*) from test_payment where id = 'first'")).isEqualTo(1);
    }

    private String debug() {
        try (Connection c = database.connect(); Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery(database == TestDatabase.POSTGRES ? "select state, query from pg_stat_activity" : "show full processlist")) {
            StringBuilder b = new StringBuilder();
            while (rs.next()) {
                int n = rs.getMetaData().getColumnCount();
                for (int i = 1; i <= n; i++) {
                    b.append(rs.getString(i)).append(" | ");
                }
                b.append("\n");
            }
            return b.toString();
        } catch (Exception e) {
            return e.toString();
        }
    }

    /** Until the duplicate's claim statement waits on the first's lock, as the database reports it. */
    private void awaitLockWaiter(Future<String> duplicate) throws Exception {
        String sql = database == TestDatabase.POSTGRES
                ? "select count(*) from pg_locks where not granted"
                : "select count(*) from information_schema.processlist where command = 'Query' and info like '%INTO idempotency_record%'";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (database.count(sql) == 0) {
            if (duplicate.isDone()) {
                duplicate.get(); // its failure, if it failed: thrown here, as the test's
            }
            assertThat(System.nanoTime()).as("the duplicate waits on the first's lock within 30 s; " + debug()).isLessThan(deadline);
            Thread.sleep(20); // polling the database's lock table
        }
    }
}
