package dev.idempotency.http;

import dev.idempotency.ForIdempotency;
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

/** The store's database for the HTTP tests: H2 through a JTA-enlisting pool (Narayana is on the class path). */
@ApplicationScoped
public class HttpResources {

    @Produces
    @ForIdempotency
    @ApplicationScoped
    DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
        return JtaEnvironment.dataSource(TestDatabase.H2, tm, tsr);
    }

    void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
        ds.unwrap(AgroalDataSource.class).close();
    }
}
