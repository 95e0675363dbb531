package dev.idempotency.store.jpa;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

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
 *
 * <p>And a bound on each of the store's statements ({@code statementBound}): a connection the store takes answers within it
 * or fails ({@link Connection#setNetworkTimeout}, the driver's socket read timeout: PostgreSQL's and MariaDB's drivers
 * honour it), so that a database whose packets vanish (a partition, a host gone silent) costs a request that already
 * holds a connection the bound, not a wait with no end; the driver then drops the connection, and the pool with it.
 * The connection's own timeout comes back when the store's handle is closed (after each statement of its JPA provider,
 * after each of its plain JDBC statements), so the application's statements on the same connection, in the same
 * transaction, keep theirs. A driver or pool that cannot set it (H2 and Derby embedded, some server pools) is used as it
 * is, and said once.
 *
 * <p>Almost every acquisition takes microseconds, so what a caller pays for the bound is what counts: it enters itself
 * in a set and leaves it (no timer per call, no thread woken). A watchdog thread of its own looks at the set every
 * tick (a twentieth of the bound, between 1 and 100 ms) and interrupts the callers past their deadline:
 * a caller is let go between the bound and the bound plus a tick. With nobody waiting for
 * {@value #LINGER_SECONDS} s the watchdog sleeps until the next caller wakes it.
 */
public final class BoundedDataSource extends DelegatingDataSource implements AutoCloseable {

    private static final int WAITING = 0;
    private static final int DONE = 1;
    private static final int INTERRUPTING = 2;
    private static final int INTERRUPTED = 3;
    private static final long LINGER_SECONDS = 10;

    private final Duration bound;
    /** Each statement's bound, in milliseconds (0: none). */
    private final int statementMillis;
    private volatile boolean networkTimeoutRefused;
    private final long boundNanos;
    private final long tickNanos;
    private final long lingerNanos;
    private final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();
    private final Thread watchdog;
    private volatile boolean asleep;
    private volatile boolean closed;

    /** A caller in the pool: its thread, its deadline, and where the race between its return and its interrupt stands. */
    private static final class Waiter extends AtomicInteger {
        final Thread caller = Thread.currentThread();
        final long deadline;

        Waiter(long deadline) {
            super(WAITING);
            this.deadline = deadline;
        }
    }

    /**
     * @param pool  the data source the store was given (a server's pool, or the application's)
     * @param bound how long a caller may wait for a connection
     */
    public BoundedDataSource(DataSource pool, Duration bound) {
        this(pool, bound, null);
    }

    /**
     * @param pool           the data source the store was given (a server's pool, or the application's)
     * @param bound          how long a caller may wait for a connection
     * @param statementBound how long each of the store's statements may go without an answer from the database before
     *                       it fails; {@code null}: no bound of the library's
     */
    public BoundedDataSource(DataSource pool, Duration bound, Duration statementBound) {
        this(pool, bound, statementBound, Duration.ofSeconds(LINGER_SECONDS));
    }

    /** @param linger how long the watchdog goes on looking after the last caller left, before it sleeps */
    BoundedDataSource(DataSource pool, Duration bound, Duration statementBound, Duration linger) {
        super(pool);
        this.bound = bound;
        this.statementMillis = statementBound == null ? 0 : (int) Math.min(Integer.MAX_VALUE, Math.max(1, statementBound.toMillis()));
        this.lingerNanos = linger.toNanos();
        this.boundNanos = bound.toNanos();
        this.tickNanos = tickOf(bound);
        // A thread of its own: a scheduler shared with other work could itself be waiting for a connection.
        this.watchdog = new Thread(this::watch, "idempotency-connection-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /**
     * The lock wait of the claim statement this thread is about to send (see {@link #waitingOnLocks}), which the
     * statement's bound must outlast; {@code null} for every other statement.
     */
    private static final ThreadLocal<Duration> LOCK_WAIT = new ThreadLocal<>();

    /**
     * Runs {@code work}, whose statements may wait up to {@code lockWait} on another transaction's lock (a claim that
     * waits inside its caller's transaction for another's uncommitted claim of the key, as long as the duplicate's
     * {@code waitTimeout}): the connections it takes are bounded by that wait and a second more (in whole seconds, as
     * the databases count lock waits), where that is longer than the statement bound, so that the driver does not drop
     * the connection of a duplicate that is only waiting as it was asked to.
     */
    public static <T> T waitingOnLocks(Duration lockWait, java.util.function.Supplier<T> work) {
        Duration before = LOCK_WAIT.get();
        LOCK_WAIT.set(lockWait);
        try {
            return work.get();
        } finally {
            if (before == null) {
                LOCK_WAIT.remove();
            } else {
                LOCK_WAIT.set(before);
            }
        }
    }

    /** The bound of a statement on a connection taken now: the statement bound, or a lock wait's (above) when longer. */
    private int statementMillisNow() {
        Duration lockWait = LOCK_WAIT.get();
        if (lockWait == null) {
            return statementMillis;
        }
        long waitMillis = ((lockWait.toMillis() + 999) / 1000 + 1) * 1000;
        return (int) Math.min(Integer.MAX_VALUE, Math.max(statementMillis, waitMillis));
    }

    /** How often the watchdog looks: a twentieth of the bound, at least 1 ms, at most 100 ms. */
    static long tickOf(Duration bound) {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(TimeUnit.MILLISECONDS.toNanos(100), bound.toNanos() / 20));
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
        return bounded(acquisition, true);
    }

    private Connection bounded(Acquisition acquisition, boolean statementBound) throws SQLException {
        Waiter waiter = new Waiter(System.nanoTime() + boundNanos);
        waiting.add(waiter);
        if (asleep) {
            LockSupport.unpark(watchdog);
        }
        Connection connection = null;
        Throwable failure = null;
        try {
            connection = acquisition.get();
        } catch (SQLException | RuntimeException | Error e) {
            failure = e;
        }
        boolean timedOut = !waiter.compareAndSet(WAITING, DONE);
        waiting.remove(waiter);
        if (timedOut) {
            while (waiter.get() != INTERRUPTED) {
                Thread.onSpinWait();
            }
            Thread.interrupted(); // the watchdog's interrupt, not the caller's
        }
        if (connection != null) {
            return !statementBound || statementMillis == 0 || networkTimeoutRefused ? connection : withStatementBound(connection);
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

    /**
     * Runs the store's own JDBC work on a connection taken as {@link #getConnection} takes one (bounded in the wait), with
     * the statement bound as its network timeout for the work and its own given back after it, then closes the handle:
     * what a handle of {@link #getConnection} does, without the proxy that restores the timeout on close, whose reflective
     * call each statement and the close would go through. The store's hot statements (a claim, an answer) run here.
     */
    public <T> T onConnection(JpaTransactions.ConnectionWork<T> work) throws SQLException {
        try (Connection connection = bounded(() -> pool().getConnection(), false)) {
            int own = statementMillis == 0 || networkTimeoutRefused ? AS_IT_WAS : bound(connection);
            try {
                return work.run(connection);
            } finally {
                if (own != AS_IT_WAS) {
                    restore(connection, own);
                }
            }
        }
    }

    /** What {@link #bound} answers when it left the connection's network timeout as it was. */
    private static final int AS_IT_WAS = Integer.MIN_VALUE;

    /**
     * The connection with the statement bound as its network timeout, given back its own when the store closes it; as it
     * is when the driver or the pool refuses.
     */
    private Connection withStatementBound(Connection connection) {
        int own = bound(connection);
        return own == AS_IT_WAS ? connection : (Connection) java.lang.reflect.Proxy.newProxyInstance(
                BoundedDataSource.class.getClassLoader(), new Class<?>[] {Connection.class}, new Restoring(connection, own));
    }

    /**
     * Sets the statement bound as the connection's network timeout; answers the connection's own, to give back, or
     * {@link #AS_IT_WAS} when it already had the bound, or the driver or the pool refused.
     */
    private int bound(Connection connection) {
        int own;
        int millis = statementMillisNow();
        try {
            own = connection.getNetworkTimeout();
            if (own == millis) {
                return AS_IT_WAS;
            }
            connection.setNetworkTimeout(DIRECT, millis);
        } catch (java.sql.SQLFeatureNotSupportedException | UnsupportedOperationException | AbstractMethodError e) {
            if (!networkTimeoutRefused) {
                networkTimeoutRefused = true;
                java.util.logging.Logger.getLogger(BoundedDataSource.class.getName()).log(java.util.logging.Level.INFO,
                        "The store''s connections take no network timeout ({0}): a statement on a connection whose database "
                                + "stopped answering waits for the driver''s own socket timeout, if any (PostgreSQL and MariaDB: "
                                + "socketTimeout in the data source''s properties)", e.toString());
            }
            return AS_IT_WAS;
        } catch (SQLException | RuntimeException e) {
            // This connection only (closed under the pool, a transaction that ended): its statements fail on their own.
            java.util.logging.Logger.getLogger(BoundedDataSource.class.getName()).log(java.util.logging.Level.FINE,
                    "Could not set a connection's network timeout", e);
            return AS_IT_WAS;
        }
        return own;
    }

    /** Gives the connection its own network timeout back, before the store closes its handle. */
    private static void restore(Connection connection, int own) {
        try {
            if (!connection.isClosed()) {
                connection.setNetworkTimeout(DIRECT, own);
            }
        } catch (SQLException | RuntimeException e) {
            // a connection the driver already dropped (its timeout passed): closing it is all that is left
        }
    }

    /**
     * The same data source, its connections bounded in the wait for them but not in their statements: for the schema's
     * statements at start (creating an index on a large table may take longer than any request should wait).
     */
    public javax.sql.DataSource withoutStatementBound() {
        return new DelegatingDataSource(pool()) {
            @Override
            public Connection getConnection() throws SQLException {
                return bounded(() -> pool().getConnection(), false);
            }

            @Override
            public Connection getConnection(String username, String password) throws SQLException {
                return bounded(() -> pool().getConnection(username, password), false);
            }
        };
    }

    /** The executor a driver may use to abort a connection whose network timeout passed: the driver's own thread. */
    private static final java.util.concurrent.Executor DIRECT = Runnable::run;

    /** Gives the connection its own network timeout back when the store closes its handle. */
    private static final class Restoring implements java.lang.reflect.InvocationHandler {
        private final Connection connection;
        private final int own;

        Restoring(Connection connection, int own) {
            this.connection = connection;
            this.own = own;
        }

        @Override
        public Object invoke(Object proxy, java.lang.reflect.Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "close" -> restore(connection, own);
                case "unwrap" -> {
                    if (((Class<?>) args[0]).isInstance(proxy)) {
                        return proxy;
                    }
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                default -> {
                }
            }
            try {
                return method.invoke(connection, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }

    /** The watchdog: every tick, the callers past their deadline are interrupted; idle, it sleeps until woken. */
    private void watch() {
        long lastSeen = System.nanoTime();
        while (!closed) {
            long now = System.nanoTime();
            if (!waiting.isEmpty()) {
                lastSeen = now;
                for (Waiter w : waiting) {
                    if (now - w.deadline >= 0 && w.compareAndSet(WAITING, INTERRUPTING)) {
                        w.caller.interrupt();
                        w.set(INTERRUPTED);
                    }
                }
            } else if (now - lastSeen > lingerNanos) {
                // Asleep only once no caller can be missed: one that came in before the flag was set is in the set, one
                // after it reads the flag and wakes this thread (an unpark before the park makes the park return).
                asleep = true;
                if (waiting.isEmpty() && !closed) {
                    LockSupport.park(this);
                }
                asleep = false;
                lastSeen = System.nanoTime();
                continue;
            }
            LockSupport.parkNanos(this, tickNanos);
        }
    }

    /** Callers in the pool now. */
    int waitingCalls() {
        return waiting.size();
    }

    /** Whether the watchdog sleeps until the next caller. */
    boolean watchdogAsleep() {
        return asleep;
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(watchdog);
    }
}
