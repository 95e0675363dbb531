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

    @Produces
    @ForIdempotency
    @ApplicationScoped
    DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
        TestDatabase db = database;
        AgroalDataSource pool = poolSize == 48 ? JtaEnvironment.dataSource(db, tm, tsr)
                : JtaEnvironment.dataSource(db.url, db.user, db.password, tm, tsr, poolSize, false, java.time.Duration.ofSeconds(30));
        census = new ConnectionCensus(pool, tsr);
        return census;
    }

    void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
        ds.unwrap(AgroalDataSource.class).close();
    }
}
