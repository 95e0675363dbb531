package dev.idempotency.testing;

import dev.idempotency.jta.JtaTransactionBridge;
import dev.idempotency.jta.TransactionManagerRequiresNew;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.JtaTransactions;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.agroal.narayana.NarayanaTransactionIntegration;

import jakarta.persistence.EntityManagerFactory;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;

/**
 * A real JTA stack in Java SE: Narayana's transaction manager, an Agroal pool that enlists its connections
 * in the JTA transaction, and the library's persistence unit on Hibernate over it.
 */
public final class JtaEnvironment implements AutoCloseable {

    public static final Map<String, String> HIBERNATE_JTA = Map.of(
            "hibernate.transaction.jta.platform", "org.hibernate.engine.transaction.jta.platform.internal.JBossStandAloneJtaPlatform");

    public final TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
    public final TransactionSynchronizationRegistry tsr =
            new com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple();
    public final AgroalDataSource dataSource;
    public final EntityManagerFactory emf;
    public final JpaIdempotencyStore store;
    private final java.util.concurrent.ExecutorService detached = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "idempotency-store-test");
        t.setDaemon(true);
        return t;
    });

    public JtaEnvironment(TestDatabase db) {
        this(db, Map.of());
    }

    /** With extra JPA provider properties (for example Hibernate's statistics). */
    public JtaEnvironment(TestDatabase db, Map<String, String> jpaProperties) {
        this(db.url, db.user, db.password, jpaProperties, 48, false);
    }

    /**
     * @param poolSize the pool's maximum size (its acquisition timeout is 10 s)
     * @param counting whether statements and commits go through {@link CountingDriver}
     */
    public JtaEnvironment(String url, String user, String password, Map<String, String> jpaProperties, int poolSize,
                          boolean counting) {
        this(url, user, password, jpaProperties, poolSize, counting, true);
    }

    /**
     * @param jdbcHotPath whether the store gets the data source for its hot statements in plain JDBC (as on its own
     *                    unit in a server), or runs everything through JPA (as on an application's unit)
     */
    public JtaEnvironment(String url, String user, String password, Map<String, String> jpaProperties, int poolSize,
                          boolean counting, boolean jdbcHotPath) {
        this(url, user, password, jpaProperties, poolSize, counting, jdbcHotPath, java.util.function.UnaryOperator.identity());
    }

    /**
     * With the pool's settings amended (for example its connection validation, as a server's pool that must outlive a
     * database failover has it).
     */
    public JtaEnvironment(String url, String user, String password, int poolSize,
                          java.util.function.UnaryOperator<io.agroal.api.configuration.supplier.AgroalConnectionPoolConfigurationSupplier> poolSettings) {
        this(url, user, password, Map.of(), poolSize, false, true, poolSettings);
    }

    private JtaEnvironment(String url, String user, String password, Map<String, String> jpaProperties, int poolSize,
                           boolean counting, boolean jdbcHotPath,
                           java.util.function.UnaryOperator<io.agroal.api.configuration.supplier.AgroalConnectionPoolConfigurationSupplier> poolSettings) {
        dataSource = dataSource(url, user, password, tm, tsr, poolSize, counting,
                Duration.ofSeconds(poolSize == 48 ? 30 : 10), poolSettings);
        JpaSchema.createIfMissing(dataSource);
        Map<String, String> properties = new java.util.HashMap<>(HIBERNATE_JTA);
        properties.putAll(jpaProperties);
        emf = IdempotencyPersistenceUnit.create(dataSource, true, properties);
        store = new JpaIdempotencyStore(new JtaTransactions(emf, tsr, new TransactionManagerRequiresNew(tm), detached,
                jdbcHotPath ? dataSource : null),
                Duration.ofSeconds(10), JpaSchema.insertIfAbsent(dataSource));
    }

    public static AgroalDataSource dataSource(TestDatabase db, TransactionManager tm, TransactionSynchronizationRegistry tsr) {
        return dataSource(db.url, db.user, db.password, tm, tsr, 48, false);
    }

    public static AgroalDataSource dataSource(String url, String user, String password, TransactionManager tm,
                                              TransactionSynchronizationRegistry tsr, int poolSize, boolean counting) {
        return dataSource(url, user, password, tm, tsr, poolSize, counting, Duration.ofSeconds(poolSize == 48 ? 30 : 10));
    }

    /** @param acquisitionTimeout how long the pool lets a caller wait for a connection */
    public static AgroalDataSource dataSource(String url, String user, String password, TransactionManager tm,
                                              TransactionSynchronizationRegistry tsr, int poolSize, boolean counting,
                                              Duration acquisitionTimeout) {
        return dataSource(url, user, password, tm, tsr, poolSize, counting, acquisitionTimeout, java.util.function.UnaryOperator.identity());
    }

    private static AgroalDataSource dataSource(String url, String user, String password, TransactionManager tm,
                                               TransactionSynchronizationRegistry tsr, int poolSize, boolean counting,
                                               Duration acquisitionTimeout,
                                               java.util.function.UnaryOperator<io.agroal.api.configuration.supplier.AgroalConnectionPoolConfigurationSupplier> poolSettings) {
        try {
            return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                    .metricsEnabled(true)
                    .connectionPoolConfiguration(pool -> poolSettings.apply(pool)
                            .maxSize(poolSize)
                            .acquisitionTimeout(acquisitionTimeout)
                            .transactionIntegration(new NarayanaTransactionIntegration(tm, tsr))
                            .connectionFactoryConfiguration(cf -> {
                                cf.jdbcUrl(counting ? CountingDriver.PREFIX + url : url)
                                        .principal(new NamePrincipal(user))
                                        .credential(new SimplePassword(password));
                                if (counting) {
                                    cf.connectionProviderClass(CountingDriver.class);
                                }
                                return cf;
                            })));
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** SQL statements Hibernate prepared so far (with {@code hibernate.generate_statistics=true}). */
    public long statements() {
        return emf.unwrap(org.hibernate.SessionFactory.class).getStatistics().getPrepareStatementCount();
    }

    /** The engine's bridge: joins the caller's transactions and begins one (REQUIRED) when there is none. */
    public JtaTransactionBridge bridge() {
        return new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm));
    }

    /** A second store over the same pool, as a deployment builds it with these bounds; closed with this environment. */
    private final java.util.List<AutoCloseable> bounded = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * A store on this pool behind the library's bounded data source, as a deployment with
     * {@code idempotency.connection-timeout} = {@code statementBound} and {@code idempotency.lock-timeout} = {@code lockTimeout}
     * builds it: each of its statements answers within the bound (a driver's network timeout), but a claim that waits on
     * another transaction's lock, which may wait longer.
     */
    public JpaIdempotencyStore boundedStore(Duration statementBound, Duration lockTimeout) {
        dev.idempotency.store.jpa.BoundedDataSource ds = new dev.idempotency.store.jpa.BoundedDataSource(dataSource,
                Duration.ofSeconds(10), statementBound);
        EntityManagerFactory unit = IdempotencyPersistenceUnit.create(ds, true, HIBERNATE_JTA);
        bounded.add(unit::close);
        bounded.add(ds);
        return new JpaIdempotencyStore(new JtaTransactions(unit, tsr, new TransactionManagerRequiresNew(tm), detached, ds),
                lockTimeout, JpaSchema.insertIfAbsent(ds.withoutStatementBound()));
    }

    @Override
    public void close() {
        detached.shutdownNow();
        for (AutoCloseable c : bounded) {
            try {
                c.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
        emf.close();
        dataSource.close();
    }
}
