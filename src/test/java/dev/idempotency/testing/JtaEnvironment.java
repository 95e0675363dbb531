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
        dataSource = dataSource(db, tm, tsr);
        JpaSchema.createIfMissing(dataSource);
        Map<String, String> properties = new java.util.HashMap<>(HIBERNATE_JTA);
        properties.putAll(jpaProperties);
        emf = IdempotencyPersistenceUnit.create(dataSource, true, properties);
        store = new JpaIdempotencyStore(new JtaTransactions(emf, tsr, new TransactionManagerRequiresNew(tm), detached),
                Duration.ofSeconds(10), JpaSchema.insertIfAbsent(dataSource));
    }

    public static AgroalDataSource dataSource(TestDatabase db, TransactionManager tm, TransactionSynchronizationRegistry tsr) {
        try {
            return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                    .connectionPoolConfiguration(pool -> pool
                            .maxSize(48)
                            .acquisitionTimeout(Duration.ofSeconds(30))
                            .transactionIntegration(new NarayanaTransactionIntegration(tm, tsr))
                            .connectionFactoryConfiguration(cf -> cf
                                    .jdbcUrl(db.url)
                                    .principal(new NamePrincipal(db.user))
                                    .credential(new SimplePassword(db.password)))));
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** SQL statements Hibernate prepared so far (with {@code hibernate.generate_statistics=true}). */
    public long statements() {
        return emf.unwrap(org.hibernate.SessionFactory.class).getStatistics().getPrepareStatementCount();
    }

    public JtaTransactionBridge bridge() {
        return new JtaTransactionBridge(tsr);
    }

    @Override
    public void close() {
        detached.shutdownNow();
        emf.close();
        dataSource.close();
    }
}
