package dev.idempotency.store.jpa;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The store's data source with the library's own bound on getting a connection ({@code idempotency.connection-timeout}):
 * a caller still waiting for the pool when the bound is reached is interrupted, and gets an
 * {@link SQLTransientConnectionException} that the store reports as unavailable (HTTP {@code 503} with
 * {@code Retry-After}). The pool's own wait (often 30 to 60 s) is left as it is; the shorter of the two answers.
 *
 * <p>Every connection the store takes goes through here: its plain JDBC statements and its JPA provider's. The handle
 * is the pool's own, unwrapped: inside a JTA transaction the server's pool still hands the transaction's enlisted
 * connection back. Interrupting a thread that waits in a pool is how each supported pool lets go of a waiter
 * (Agroal, IronJacamar, Liberty's and Payara's pools all end the wait on an interrupt); the interrupt is ours, so it is
 * cleared before the caller continues, and a connection obtained in the same instant is kept.
 */
public final class BoundedDataSource extends DelegatingDataSource implements AutoCloseable {

    private static final int WAITING = 0;
    private static final int DONE = 1;
    private static final int INTERRUPTING = 2;
    private static final int INTERRUPTED = 3;

    private final Duration bound;
    private final ScheduledThreadPoolExecutor watchdog;

    /**
     * @param pool  the data source the store was given (a server's pool, or the application's)
     * @param bound how long a caller may wait for a connection
     */
    public BoundedDataSource(DataSource pool, Duration bound) {
        super(pool);
        this.bound = bound;
        // A thread of its own: a scheduler shared with other work could itself be waiting for a connection.
        this.watchdog = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "idempotency-connection-watchdog");
            t.setDaemon(true);
            return t;
        });
        watchdog.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Connection getConnection() throws SQLException {
        return bounded(() -> pool().getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return bounded(() -> pool().getConnection(username, password));
    }

    @FunctionalInterface
    private interface Acquisition {
        Connection get() throws SQLException;
    }

    private Connection bounded(Acquisition acquisition) throws SQLException {
        Thread caller = Thread.currentThread();
        AtomicInteger state = new AtomicInteger(WAITING);
        ScheduledFuture<?> alarm = watchdog.schedule(() -> {
            if (state.compareAndSet(WAITING, INTERRUPTING)) {
                caller.interrupt();
                state.set(INTERRUPTED);
            }
        }, bound.toNanos(), TimeUnit.NANOSECONDS);
        Connection connection = null;
        Throwable failure = null;
        try {
            connection = acquisition.get();
        } catch (SQLException | RuntimeException | Error e) {
            failure = e;
        }
        boolean timedOut = !state.compareAndSet(WAITING, DONE);
        if (timedOut) {
            while (state.get() != INTERRUPTED) {
                Thread.onSpinWait();
            }
            Thread.interrupted(); // the watchdog's interrupt, not the caller's
        } else {
            alarm.cancel(false);
        }
        if (connection != null) {
            return connection;
        }
        if (timedOut) {
            throw new SQLTransientConnectionException("No database connection within " + bound
                    + " (idempotency.connection-timeout): every connection of the pool is in use", "08001", failure);
        }
        if (failure instanceof SQLException e) {
            throw e;
        }
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        throw (Error) failure;
    }

    @Override
    public void close() {
        watchdog.shutdownNow();
    }
}
