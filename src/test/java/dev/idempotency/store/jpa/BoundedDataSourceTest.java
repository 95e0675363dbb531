package dev.idempotency.store.jpa;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The library's bound on getting a connection, in front of a real pool (Agroal, one connection, H2): a caller still
 * waiting at the bound is let go within a tick of it, its interrupt cleared; a caller served at once is never
 * interrupted afterwards; an idle watchdog sleeps, and the next caller that waits wakes it.
 */
class BoundedDataSourceTest {

    static final Duration BOUND = Duration.ofMillis(400);

    AgroalDataSource pool;

    @BeforeEach
    void pool() throws Exception {
        // The pool's own wait is far longer than the bound: only the library's bound can end a wait here.
        pool = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(p -> p.maxSize(1).acquisitionTimeout(Duration.ofSeconds(60))
                        .connectionFactoryConfiguration(cf -> cf.jdbcUrl("jdbc:h2:mem:bounded;DB_CLOSE_DELAY=-1")
                                .principal(new NamePrincipal("sa")).credential(new SimplePassword("")))));
    }

    @AfterEach
    void close() {
        pool.close();
    }

    @Test
    void aCallerStillWaitingAtTheBoundIsLetGoWithinATickOfIt() throws Exception {
        try (BoundedDataSource bounded = new BoundedDataSource(pool, BOUND); Connection held = bounded.getConnection()) {
            assertThat(held.isValid(5)).isTrue();
            long started = System.nanoTime();
            assertThatThrownBy(bounded::getConnection)
                    .isInstanceOf(SQLTransientConnectionException.class)
                    .hasMessageContaining("idempotency.connection-timeout");
            Duration waited = Duration.ofNanos(System.nanoTime() - started);
            assertThat(waited).as("not before the bound").isGreaterThanOrEqualTo(BOUND);
            // A tick is 20 ms here; the rest is room for a loaded machine's scheduling.
            assertThat(waited).as("let go soon after the bound, not at the pool's 60 s").isLessThan(BOUND.plusSeconds(5));
            assertThat(Thread.currentThread().isInterrupted()).as("the watchdog's interrupt is cleared").isFalse();
            assertThat(bounded.waitingCalls()).isZero();
        }
    }

    @Test
    void aCallerServedAtOnceIsNeverInterruptedAfterwards() throws Exception {
        try (BoundedDataSource bounded = new BoundedDataSource(pool, BOUND)) {
            Connection first = bounded.getConnection();
            // Out of the watchdog's sight once it has its connection: nothing can interrupt it later.
            assertThat(bounded.waitingCalls()).isZero();
            first.close();
            // A second caller on another thread waits past the bound while this one holds the connection: the watchdog
            // runs through deadlines, and lets go of that caller only.
            Connection held = bounded.getConnection();
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    outcome.set(bounded.getConnection());
                } catch (Exception e) {
                    outcome.set(e);
                }
            });
            other.start();
            other.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(other.isAlive()).isFalse();
            assertThat(outcome.get()).isInstanceOf(SQLTransientConnectionException.class);
            assertThat(Thread.currentThread().isInterrupted()).as("the served caller").isFalse();
            assertThat(held.isValid(5)).isTrue();
            held.close();
        }
    }

    @Test
    void anIdleWatchdogSleepsAndTheNextWaitingCallerWakesIt() throws Exception {
        try (BoundedDataSource bounded = new BoundedDataSource(pool, BOUND, null, Duration.ofMillis(50))) {
            bounded.getConnection().close();
            assertThat(until(bounded::watchdogAsleep, Duration.ofSeconds(30))).as("asleep after 50 ms without a caller").isTrue();
            try (Connection held = bounded.getConnection()) {
                long started = System.nanoTime();
                assertThatThrownBy(bounded::getConnection).isInstanceOf(SQLTransientConnectionException.class);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).as("woken, it let the caller go").isLessThan(BOUND.plusSeconds(5));
                assertThat(held.isValid(5)).isTrue();
            }
        }
    }

    /**
     * The store's own statements ({@code onConnection}) and a handle of {@code getConnection} (its JPA provider's) both run
     * under the statement bound, and both give the connection its own network timeout back: the application's statements
     * on the same connection, in the same transaction, keep theirs. On PostgreSQL, whose driver takes a network timeout; the
     * data source hands out one physical connection, as a server's pool does inside a transaction.
     */
    @Test
    void theStatementBoundHoldsForTheStoresWorkAndTheConnectionsOwnTimeoutComesBack() throws Exception {
        dev.idempotency.testing.TestDatabase.POSTGRES.assumeAvailable();
        try (Connection physical = dev.idempotency.testing.TestDatabase.POSTGRES.connect()) {
            physical.setNetworkTimeout(Runnable::run, 12_000); // the application's own (socketTimeout=12 in its URL, say)
            javax.sql.DataSource enlisted = new DelegatingDataSource(null) {
                @Override
                public Connection getConnection() {
                    return (Connection) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                            new Class<?>[] {Connection.class}, (proxy, method, args) -> method.getName().equals("close") ? null
                                    : invoke(physical, method, args)); // the handle's close leaves it with the transaction
                }

                @Override
                public Connection getConnection(String username, String password) {
                    return getConnection();
                }
            };
            try (BoundedDataSource bounded = new BoundedDataSource(enlisted, BOUND, Duration.ofSeconds(3))) {
                assertThat(bounded.onConnection(Connection::getNetworkTimeout)).as("the store's statements' bound").isEqualTo(3_000);
                assertThat(physical.getNetworkTimeout()).as("the connection's own, after the store's work").isEqualTo(12_000);
                try (Connection handle = bounded.getConnection()) {
                    assertThat(handle.getNetworkTimeout()).as("a handle's statements' bound").isEqualTo(3_000);
                }
                assertThat(physical.getNetworkTimeout()).as("the connection's own, after the handle closed").isEqualTo(12_000);
                assertThatThrownBy(() -> bounded.onConnection(c -> {
                    throw new java.sql.SQLException("the work failed");
                })).hasMessage("the work failed");
                assertThat(physical.getNetworkTimeout()).as("the connection's own, after work that failed").isEqualTo(12_000);
            }
        }
    }

    static Object invoke(Connection target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Polls a condition until it holds or the time is up. */
    static boolean until(BooleanSupplier condition, Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        return true;
    }
}
