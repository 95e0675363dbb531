package dev.idempotency.bench;

import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.jta.JtaTransactionBridge;
import dev.idempotency.jta.TransactionManagerRequiresNew;
import dev.idempotency.spi.RecordCache;
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

import org.apache.camel.processor.idempotent.jpa.JpaMessageIdRepository;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * What the JTA benchmarks measure, on one database: Narayana's transaction manager, an Agroal pool enlisting
 * its connections, the library's engine over its JPA store on Hibernate's JTA platform (it joins the caller's
 * transactions and begins its own), a plain pool for the floors, and Camel's JPA repository.
 */
final class JtaSubjects implements AutoCloseable {

    final TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
    final TransactionSynchronizationRegistry tsr =
            new com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple();
    final AgroalDataSource jtaPool;
    final AgroalDataSource plainPool;
    final EntityManagerFactory emf;
    final IdempotencyEngine engine;
    /** The same store behind the local cache (the library's default), as the optimistic claim is meant to run. */
    final IdempotencyEngine cachedEngine;
    /** The same store behind a local Infinispan cache (an application's own, given to the library; the default until 2026-11-26). */
    final IdempotencyEngine infinispanCachedEngine;
    private final org.infinispan.manager.EmbeddedCacheManager cacheManager;
    final EntityManagerFactory camelEmf;
    final JpaMessageIdRepository camel;
    private final ExecutorService detached = Executors.newCachedThreadPool();

    JtaSubjects(Database database) throws SQLException {
        jtaPool = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(c -> c.maxSize(16)
                        .transactionIntegration(new NarayanaTransactionIntegration(tm, tsr))
                        // Out of auto-commit, as the plain pools: Agroal then does not switch it off and on around
                        // each transaction (two round trips on MariaDB that the floor's connection never pays).
                        .connectionFactoryConfiguration(f -> f.autoCommit(false).jdbcUrl(database.url)
                                .principal(new NamePrincipal(database.user)).credential(new SimplePassword(database.password)))));
        plainPool = database.pool(16);
        emf = IdempotencyPersistenceUnit.create(jtaPool, true, Map.of("hibernate.transaction.jta.platform",
                "org.hibernate.engine.transaction.jta.platform.internal.JBossStandAloneJtaPlatform"));
        JpaIdempotencyStore store = new JpaIdempotencyStore(new JtaTransactions(emf, tsr, new TransactionManagerRequiresNew(tm), detached, jtaPool),
                Duration.ofSeconds(5), JpaSchema.insertIfAbsent(plainPool));
        engine = new IdempotencyEngine(store, Clock.systemUTC(), "bench",
                new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm)), new LocalCompletionSignals(),
                detached, Duration.ofSeconds(30), RecordCache.NONE);
        // The library as it runs by default: its local cache in front of the same store.
        LocalCompletionSignals signals = new LocalCompletionSignals();
        cachedEngine = new IdempotencyEngine(store, Clock.systemUTC(), "bench-cached",
                new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm)), signals, detached, Duration.ofSeconds(30),
                new dev.idempotency.cache.LocalRecordCache(100_000, Clock.systemUTC(), signals));
        // And with a local Infinispan cache instead.
        cacheManager = dev.idempotency.cache.CacheManagers.start(false, "bench-jta", "bench", null, "127.0.0.1", 7800,
                "127.0.0.1[7800]", 100_000);
        LocalCompletionSignals infinispanSignals = new LocalCompletionSignals();
        infinispanCachedEngine = new IdempotencyEngine(store, Clock.systemUTC(), "bench-infinispan",
                new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm)), infinispanSignals, detached,
                Duration.ofSeconds(30), new dev.idempotency.cache.InfinispanRecordCache(
                        dev.idempotency.cache.CacheManagers.defineCache(cacheManager, 100_000), Clock.systemUTC(), infinispanSignals));
        camelEmf = CamelPeers.messageProcessedUnit(plainPool);
        camel = CamelPeers.jpa(camelEmf, "bench");
    }

    /** The business work: one row, through the JTA-enlisted pool (it joins the current transaction). */
    void business(String id) throws SQLException {
        try (Connection c = jtaPool.getConnection();
             PreparedStatement insert = c.prepareStatement("INSERT INTO bench_business (id, amount) VALUES (?, 1250)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
    }

    @Override
    public void close() {
        camel.stop();
        cacheManager.stop();
        camelEmf.close();
        emf.close();
        detached.shutdownNow();
        jtaPool.close();
        plainPool.close();
    }
}
