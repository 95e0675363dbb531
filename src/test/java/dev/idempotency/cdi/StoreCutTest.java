package dev.idempotency.cdi;

import dev.idempotency.health.IdempotencyReadinessCheck;
import com.arjuna.ats.jta.cdi.TransactionExtension;
import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TcpProxy;
import dev.idempotency.testing.TestDatabase;
import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Always answers" when the database goes silent (a partition, a dead switch: packets dropped, nothing closed), through a
 * proxy the test stalls in front of the local PostgreSQL (the shared {@link TcpProxy}): a call whose transaction already holds its connection and
 * new calls are each answered as store unavailable ({@link IdempotencyStoreException}: {@code 503} over HTTP) within
 * the connection timeout, plus the watchdog's tick and the driver's abort; the readiness check is DOWN within 5 s; after
 * the heal it is UP again, the interrupted key runs once, and no session is left idle in a transaction.
 */
class StoreCutTest {

    static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(3);
    /** What a call may take past the bound: the watchdog's tick, the driver giving the connection up, the rollback. */
    static final long MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1500);

    static TcpProxy proxy;
    static CountDownLatch entered;
    static CountDownLatch cut;

    @ApplicationScoped
    public static class Resources {
        @Produces
        @ForIdempotency
        @ApplicationScoped
        DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
            URI db = URI.create(TestDatabase.POSTGRES.url.substring("jdbc:".length()));
            // loginTimeout bounds a new connection's handshake (the pool's own threads make them), as a server's data
            // source should; no socketTimeout: the bound on the store's statements is the library's.
            String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + db.getPath() + "?loginTimeout=5";
            return JtaEnvironment.dataSource(url, TestDatabase.POSTGRES.user, TestDatabase.POSTGRES.password, tm, tsr, 8, false,
                    Duration.ofSeconds(30));
        }

        void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
            ds.unwrap(AgroalDataSource.class).close();
        }
    }

    /** The business work: one row; a call of {@code held} waits, its row written, until the test has cut the database off. */
    @ApplicationScoped
    public static class Payments {
        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Idempotent
        public String pay(@IdempotencyKey String key) throws Exception {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 100)")) {
                ps.setString(1, key);
                ps.executeUpdate();
            }
            if (key.startsWith("held")) {
                entered.countDown();
                cut.await();
            }
            return "paid " + key;
        }
    }

    WeldContainer container;
    final ExecutorService calls = Executors.newCachedThreadPool();

    @BeforeEach
    void boot() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        TestDatabase.POSTGRES.reset();
        proxy = new TcpProxy(URI.create(TestDatabase.POSTGRES.url.substring("jdbc:".length())).getHost(),
                URI.create(TestDatabase.POSTGRES.url.substring("jdbc:".length())).getPort());
        entered = new CountDownLatch(1);
        cut = new CountDownLatch(1);
        Map<String, String> config = new HashMap<>(Map.of("idempotency.connection-timeout", CONNECTION_TIMEOUT.toString(),
                "idempotency.lock-timeout", "PT1S", "idempotency.claim-lock-timeout", "PT1S"));
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, Resources.class, Payments.class)
                .addExtension(new TransactionExtension())
                .initialize();
    }

    @AfterEach
    void stop() throws Exception {
        calls.shutdownNow();
        if (proxy != null) {
            proxy.restore();
        }
        if (container != null) {
            container.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    void aDatabaseGoneSilentIsAnsweredWithinTheBoundAndReadinessFollowsIt() throws Exception {
        Payments payments = container.select(Payments.class).get();
        IdempotencyReadinessCheck readiness = container.select(IdempotencyReadinessCheck.class, org.eclipse.microprofile.health.Readiness.Literal.INSTANCE).get();
        assertThat(payments.pay("warm")).isEqualTo("paid warm");
        // The check's store part (a health response needs a MicroProfile Health runtime): null is UP.
        assertThat(readiness.store()).as("the store's part of readiness").isNull();

        // A call inside its claim's transaction, its row written: then the database goes silent.
        Future<Object> held = calls.submit(() -> outcome(() -> payments.pay("held-1")));
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        proxy.stall();
        long silenced = System.nanoTime();
        cut.countDown();
        List<Future<Object>> fresh = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String key = "fresh-" + i;
            fresh.add(calls.submit(() -> outcome(() -> payments.pay(key))));
        }
        long probed = System.nanoTime();
        String down = readiness.store();
        long readinessTook = System.nanoTime() - probed;

        Object heldOutcome = held.get(60, TimeUnit.SECONDS);
        long heldTook = System.nanoTime() - silenced;
        List<Object> freshOutcomes = new ArrayList<>();
        for (Future<Object> f : fresh) {
            freshOutcomes.add(f.get(60, TimeUnit.SECONDS));
        }
        long allTook = System.nanoTime() - silenced;
        System.out.printf("The database silent: the held call answered after %d ms (%s); four new calls within %d ms (%s); "
                        + "readiness %s after %d ms (%s)%n", TimeUnit.NANOSECONDS.toMillis(heldTook), heldOutcome,
                TimeUnit.NANOSECONDS.toMillis(allTook), freshOutcomes, down == null ? "UP" : "DOWN", TimeUnit.NANOSECONDS.toMillis(readinessTook),
                down);

        assertThat(down).as("readiness while the database is silent").isNotNull();
        assertThat(readinessTook).as("readiness answered within 5 s").isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(5));
        assertThat(heldOutcome).as("the call that held its connection").isInstanceOf(IdempotencyStoreException.class);
        assertThat(freshOutcomes).as("new calls").allSatisfy(o -> assertThat(o).isInstanceOf(IdempotencyStoreException.class));
        assertThat(allTook).as("every call answered within the connection timeout and a margin")
                .isLessThanOrEqualTo(CONNECTION_TIMEOUT.toNanos() + MARGIN_NANOS);

        proxy.restore();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String up;
        do {
            up = readiness.store();
        } while (up != null && System.nanoTime() < deadline);
        assertThat(up).as("readiness after the heal").isNull();
        assertThat(payments.pay("held-1")).as("the interrupted key, retried").isEqualTo("paid held-1");
        assertThat(payments.pay("held-1")).as("and retried again: replayed").isEqualTo("paid held-1");
        assertThat(TestDatabase.POSTGRES.count("select count(*) from test_payment where id = 'held-1'")).as("one business row").isEqualTo(1);
        long idle;
        do {
            idle = TestDatabase.POSTGRES.count("select count(*) from pg_stat_activity where datname = current_database() "
                    + "and state like 'idle in transaction%' and pid <> pg_backend_pid()");
            if (idle > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the sessions end on the database's side
            }
        } while (idle > 0 && System.nanoTime() < deadline);
        assertThat(idle).as("sessions left idle in a transaction").isZero();
    }

    @FunctionalInterface
    interface Call {
        Object call() throws Exception;
    }

    private static Object outcome(Call call) {
        try {
            return call.call();
        } catch (Exception e) {
            return e;
        }
    }
}
