package dev.idempotency.bench;

import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.ResourceLocalTransactions;

import io.agroal.api.AgroalDataSource;
import jakarta.persistence.EntityManagerFactory;

import org.apache.camel.processor.idempotent.jpa.JpaMessageIdRepository;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;

/**
 * What the resource-local database benchmarks measure, on one pool: the library's engine over its JPA store
 * (resource-local transactions, the claim as the database takes it best), and Camel's JPA repository.
 */
final class Subjects implements AutoCloseable {

    /** 24 h records, 1 min leases, duplicates of an in-progress key rejected at once. */
    static final Policy POLICY = new Policy(Duration.ofHours(24), Duration.ofMinutes(1), false, Duration.ZERO);

    final AgroalDataSource pool;
    final EntityManagerFactory emf;
    final IdempotencyEngine engine;
    final EntityManagerFactory camelEmf;
    final JpaMessageIdRepository camel;
    final byte[] response = new byte[1024];

    Subjects(Database database, int poolSize) throws SQLException {
        pool = database.pool(poolSize);
        emf = IdempotencyPersistenceUnit.create(pool, false, Database.JPA_PROPERTIES);
        engine = IdempotencyEngine.simple(new JpaIdempotencyStore(new ResourceLocalTransactions(emf), Duration.ofSeconds(5),
                JpaSchema.insertIfAbsent(pool)), Clock.systemUTC(), "bench");
        camelEmf = CamelPeers.messageProcessedUnit(pool);
        camel = CamelPeers.jpa(camelEmf, "bench");
    }

    /** A new key through the engine and the JPA store: claim, then complete with a 1 KiB response. */
    Decision.Proceed firstRequest(String key) {
        Decision.Proceed p = (Decision.Proceed) engine.begin(new ScopedKey("bench", "anonymous", key), "fp", null, POLICY);
        engine.complete(p.ticket(), response);
        return p;
    }

    /** The peer: Camel's eager add, then confirm (it stores no response, and confirm is a no-op). */
    boolean camelAddThenConfirm(String key) {
        if (!camel.add(key)) {
            throw new IllegalStateException("a new key was not new to Camel");
        }
        return camel.confirm(key);
    }

    @Override
    public void close() {
        camel.stop();
        camelEmf.close();
        emf.close();
        pool.close();
    }
}
