package dev.idempotency.http;

import dev.idempotency.ForIdempotency;
import dev.idempotency.testing.ConnectionCensus;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import io.agroal.api.AgroalDataSource;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.sql.DataSource;
import java.sql.SQLException;

/**
 * The store's database for the HTTP tests: H2 through a JTA-enlisting pool (Narayana is on the class path), counted by a
 * {@link ConnectionCensus}. A test class may choose another database and pool size before it starts its server.
 */
@ApplicationScoped
public class HttpResources {

    static volatile TestDatabase database = TestDatabase.H2;
    static volatile int poolSize = 48;
    /** The census in front of the pool of the server started last. */
    static volatile ConnectionCensus census;
    /**
     * A pool of the test's own for the next server (the first-answer contract's, whose calls write through it): used as
     * it is and left open; {@code null}: a pool of the server's own on {@link #database}.
     */
    static volatile DataSource given;
    /** The clock of the next server's engine; {@code null} (every test but the contract's): the store's clock. */
    static volatile java.time.Clock clock;
    /** A cache manager of the test's own for the next server; {@code null}: the one {@code idempotency.cache.mode} says. */
    static volatile org.infinispan.manager.EmbeddedCacheManager cacheManager;

    @Produces
    @ForIdempotency
    java.time.Clock clock() {
        return clock;
    }

    @Produces
    @ForIdempotency
    org.infinispan.manager.EmbeddedCacheManager cacheManager() {
        return cacheManager;
    }

    @Produces
    @ForIdempotency
    @ApplicationScoped
    DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
        if (given != null) {
            census = new ConnectionCensus(given, tsr);
            return census;
        }
        TestDatabase db = database;
        AgroalDataSource pool = poolSize == 48 ? JtaEnvironment.dataSource(db, tm, tsr)
                : JtaEnvironment.dataSource(db.url, db.user, db.password, tm, tsr, poolSize, false, java.time.Duration.ofSeconds(30));
        census = new ConnectionCensus(pool, tsr);
        return census;
    }

    void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
        if (given == null) {
            ds.unwrap(AgroalDataSource.class).close();
        }
    }
}
