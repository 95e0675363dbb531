package dev.idempotency.cdi;

import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import jakarta.transaction.TransactionManager;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.StoreSelection;
import dev.idempotency.runtime.TransactionSynchronizationRegistryHolder;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * The store starts on first use, and in a server that can be inside a container transaction: a message-driven bean
 * delivering a backlog at start-up, before the application's start event (seen on Open Liberty, whose JTA data source
 * refuses {@code setAutoCommit} in a global transaction). The table is then prepared outside that transaction: it
 * exists after the caller's transaction rolled back, and preparing it did not fail.
 */
class SchemaOutsideTheCallersTransactionTest {

    WeldContainer container;

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
    }

    @Test
    void aStoreCreatedInsideATransactionPreparesItsTableOutsideIt() throws Exception {
        TestDatabase.H2.reset();
        JtaInterceptorContract.current = TestDatabase.H2;
        Map<String, String> config = new HashMap<>();
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class)
                .addExtension(new com.arjuna.ats.jta.cdi.TransactionExtension())
                .initialize();
        // The engine started with the container and made the table: drop it, as on a database not yet prepared.
        try (Connection c = TestDatabase.H2.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE idempotency_record");
            s.execute("DROP TABLE IF EXISTS idempotency_schema_version");
        }
        IdempotencyRuntime runtime = container.select(IdempotencyRuntime.class).get();
        StoreSelection selection = container.select(StoreSelection.class).get();
        TransactionManager tm = container.select(TransactionManager.class).get();
        TransactionSynchronizationRegistryHolder tsr = TransactionSynchronizationRegistryHolder.find(container.select(Object.class));

        tm.begin();
        try {
            selection.create(runtime.settings(), tsr);
        } finally {
            tm.rollback();
        }
        assertThat(TestDatabase.H2.count("select count(*) from idempotency_record"))
                .as("the table, made outside the transaction that rolled back").isZero();
    }
}
