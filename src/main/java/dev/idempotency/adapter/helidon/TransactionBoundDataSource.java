package dev.idempotency.adapter.helidon;

import dev.idempotency.jta.AfterCompletion;
import dev.idempotency.runtime.EnlistingDataSource;
import dev.idempotency.runtime.Lookups;

import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A data source that gives every {@code getConnection} of one JTA transaction a handle on the same connection, enlisted
 * in that transaction: what every server's pool does, for a runtime whose data sources are plain pools (Helidon MP,
 * whose HikariCP data sources are enlisted only by its JPA units, one connection per entity manager). The claim's
 * statements and the application's writes through this data source then commit or roll back together, on one
 * connection.
 *
 * <p>The enlistment is Helidon's own JTA adapter ({@code io.helidon.integrations.jta.jdbc.JtaAdaptingDataSource}, in
 * {@code helidon-integrations-jta-jdbc}), found by name: the library does not depend on Helidon. The connection is closed
 * (returned to the pool) when its transaction completes; closing a handle closes only the handle. Outside a transaction
 * each {@code getConnection} is the adapter's own, in auto-commit.
 */
public final class TransactionBoundDataSource extends dev.idempotency.store.jpa.DelegatingDataSource
        implements EnlistingDataSource {

    static final String ADAPTER = EnlistingDataSource.HELIDON_ADAPTER;
    private static final String TRANSACTION_SUPPLIER = "io.helidon.integrations.jta.jdbc.TransactionSupplier";

    private final DataSource enlisting;
    private final TransactionSynchronizationRegistry registry;
    /** The key of this data source's connection among a transaction's resources. */
    private final Object key = new Object();

    private TransactionBoundDataSource(DataSource pool, DataSource enlisting, TransactionSynchronizationRegistry registry) {
        super(pool);
        this.enlisting = enlisting;
        this.registry = registry;
    }

    /** Whether Helidon's JTA adapter is on the class path. */
    static boolean adapterPresent() {
        return Lookups.present(ADAPTER);
    }

    /** The pool, its connections enlisted by Helidon's adapter, one per transaction. */
    static TransactionBoundDataSource over(DataSource pool, TransactionManager tm, TransactionSynchronizationRegistry registry) {
        try {
            ClassLoader loader = TransactionBoundDataSource.class.getClassLoader();
            Class<?> adapter = Class.forName(ADAPTER, true, loader);
            Class<?> supplierType = Class.forName(TRANSACTION_SUPPLIER, true, adapter.getClassLoader());
            Object supplier = Proxy.newProxyInstance(supplierType.getClassLoader(), new Class<?>[] {supplierType},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "getTransaction" -> tm.getTransaction();
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        case "toString" -> "the transaction manager's current transaction";
                        default -> throw new UnsupportedOperationException(method.getName());
                    });
            Class<?> converter = Class.forName("io.helidon.integrations.jta.jdbc.ExceptionConverter", true, adapter.getClassLoader());
            // (transaction supplier, registry, interposed synchronizations, exception converter, data source,
            // immediate enlistment, preemptive enlistment checks): Helidon's JPA units' own settings
            Object enlisting = adapter.getConstructor(supplierType, TransactionSynchronizationRegistry.class, boolean.class,
                    converter, DataSource.class, boolean.class, boolean.class)
                    .newInstance(supplier, registry, true, null, pool, false, true);
            return new TransactionBoundDataSource(pool, (DataSource) enlisting, registry);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("Helidon's JTA adapter refused the data source: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IllegalStateException("Helidon's JTA adapter (" + ADAPTER + ") could not be made: " + e, e);
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (registry.getTransactionKey() == null) {
            return enlisting.getConnection();
        }
        Connection shared = (Connection) registry.getResource(key);
        if (shared == null) {
            shared = enlist();
        }
        return handle(shared);
    }

    /**
     * Outside a transaction, the adapter's connection for that user (where the pool gives one: HikariCP does not).
     * Inside one, refused: a second user's connection would commit apart from the claims'.
     */
    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        if (registry.getTransactionKey() != null) {
            throw new java.sql.SQLFeatureNotSupportedException("A transaction's connection is the pool's own user's, the one "
                    + "the claims are written on: leave the user to the data source's configuration (not "
                    + "hibernate.connection.username or jakarta.persistence.jdbc.user in a persistence unit)");
        }
        return enlisting.getConnection(username, password);
    }

    /** The transaction's connection, taken from the adapter and kept among the transaction's resources until it ends. */
    private Connection enlist() throws SQLException {
        Connection opened = enlisting.getConnection();
        try {
            // the adapter's own resource commits or rolls the connection back; then it goes back to the pool
            AfterCompletion.register(registry, status -> {
                try {
                    opened.close();
                } catch (SQLException e) {
                    java.util.logging.Logger.getLogger(TransactionBoundDataSource.class.getName())
                            .log(java.util.logging.Level.WARNING, "Could not return a transaction's connection to the pool", e);
                }
            });
        } catch (RuntimeException e) {
            opened.close();
            throw new SQLException("The transaction takes no more work (" + e.getMessage() + ")", "25000", e);
        }
        registry.putResource(key, opened);
        return opened;
    }

    /** A handle on the transaction's connection: its close ends the handle, not the connection. */
    private static Connection handle(Connection shared) {
        InvocationHandler h = new InvocationHandler() {
            private volatile boolean closed;

            @Override
            public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
                switch (method.getName()) {
                    case "close":
                        closed = true;
                        return null;
                    case "isClosed":
                        return closed || shared.isClosed();
                    case "hashCode":
                        return System.identityHashCode(proxy);
                    case "equals":
                        return proxy == args[0];
                    case "toString":
                        return "a handle on " + shared;
                    default:
                        if (closed) {
                            throw new SQLException("This connection handle is closed", "08003");
                        }
                        try {
                            return method.invoke(shared, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                }
            }
        };
        return (Connection) Proxy.newProxyInstance(TransactionBoundDataSource.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
    }

    @Override
    public String toString() {
        return "one enlisted connection per transaction over " + pool();
    }
}
