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
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Distinct keys from 8 threads: throughput of first requests (claim + complete) through the engine, beside
 * the raw-JDBC floor's same two transactions (a connection per thread) and Camel's JPA repository. Run with
 * {@code -t 1}, {@code -t 2}, {@code -t 4} for the scaling with threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
public class DistinctKeysBenchmark {

    static final Policy POLICY = FirstRequestBenchmark.POLICY;

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    AgroalDataSource pool;
    EntityManagerFactory emf;
    EntityManagerFactory camelEmf;
    JpaMessageIdRepository camel;
    IdempotencyEngine engine;
    final AtomicLong sequence = new AtomicLong();
    final byte[] response = new byte[1024];

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(1000);
        pool = database.pool(16);
        emf = IdempotencyPersistenceUnit.create(pool, false, Database.JPA_PROPERTIES);
        engine = IdempotencyEngine.simple(new JpaIdempotencyStore(new ResourceLocalTransactions(emf), Duration.ofSeconds(5),
                JpaSchema.insertIfAbsent(pool)), Clock.systemUTC(), "bench");
        camelEmf = CamelPeers.messageProcessedUnit(pool);
        camel = CamelPeers.jpa(camelEmf, "bench");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        camel.stop();
        camelEmf.close();
        emf.close();
        pool.close();
    }

    /** Each thread's own connection for the floor. */
    @State(Scope.Thread)
    public static class FloorConnection {
        Connection c;

        @Setup(Level.Trial)
        public void open(DistinctKeysBenchmark b) throws Exception {
            c = b.database.connect();
            c.setAutoCommit(false);
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            c.close();
        }
    }

    @Benchmark
    public int floorInsertThenLockedUpdate(FloorConnection floor) throws Exception {
        return FirstRequestBenchmark.Floor.insertThenLockedUpdate(floor.c, "f" + sequence.incrementAndGet(), response);
    }

    @Benchmark
    public Object firstRequestThroughTheEngine() {
        ScopedKey key = new ScopedKey("bench", "anonymous", "k" + sequence.incrementAndGet());
        Decision.Proceed p = (Decision.Proceed) engine.begin(key, "fp", null, POLICY);
        engine.complete(p.ticket(), response);
        return p;
    }

    @Benchmark
    public boolean camelJpaAddThenConfirm() {
        String key = "c" + sequence.incrementAndGet();
        if (!camel.add(key)) {
            throw new IllegalStateException("a new key was not new to Camel");
        }
        return camel.confirm(key);
    }
}
