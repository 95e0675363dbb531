package dev.idempotency.bench;

import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.ResourceLocalTransactions;

import jakarta.persistence.EntityManagerFactory;

import org.h2.jdbcx.JdbcDataSource;
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
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A first request (claim, then completion, each in a transaction of its own) through the JPA store, beside
 * its floor on the same database with raw JDBC: INSERT+COMMIT, then SELECT ... FOR UPDATE + UPDATE + COMMIT.
 * Resource-local transactions (Java SE) over an Agroal pool; the database is a parameter: h2 (in memory) or
 * postgresql (local).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FirstRequestBenchmark {

    static final Policy POLICY = new Policy(Duration.ofHours(24), Duration.ofMinutes(1), false, Duration.ZERO);

    @Param({"h2", "postgresql"})
    public String database;

    DataSource dataSource;
    io.agroal.api.AgroalDataSource pool;
    EntityManagerFactory emf;
    IdempotencyEngine engine;
    Connection floor;
    final AtomicLong sequence = new AtomicLong();
    final byte[] response = new byte[1024];

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        if (database.equals("h2")) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1");
            dataSource = h2;
        } else {
            PGSimpleDataSource pg = new PGSimpleDataSource();
            pg.setURL("jdbc:postgresql://127.0.0.1:5432/test");
            pg.setUser("postgres");
            dataSource = pg;
        }
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS bench_floor");
            s.execute("CREATE TABLE bench_floor (id VARCHAR(64) PRIMARY KEY, status VARCHAR(16), response "
                    + (database.equals("h2") ? "VARBINARY(16777216)" : "BYTEA") + ")");
        }
        JpaSchema.createIfMissing(dataSource);
        // As in a server: the store's connections come from a pool.
        pool = io.agroal.api.AgroalDataSource.from(new io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(c -> c.maxSize(16).connectionFactoryConfiguration(f -> f
                        .jdbcUrl(database.equals("h2") ? "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1" : "jdbc:postgresql://127.0.0.1:5432/test")
                        .principal(new io.agroal.api.security.NamePrincipal(database.equals("h2") ? "" : "postgres")))));
        emf = IdempotencyPersistenceUnit.create(pool, false, Map.of());
        engine = IdempotencyEngine.simple(new JpaIdempotencyStore(new ResourceLocalTransactions(emf), Duration.ofSeconds(5)),
                Clock.systemUTC(), "bench");
        floor = dataSource.getConnection();
        floor.setAutoCommit(false);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        floor.close();
        emf.close();
        pool.close();
    }

    /** The floor: the two short transactions, in raw JDBC. */
    @Benchmark
    public int floorInsertThenLockedUpdate() throws Exception {
        String id = "f" + sequence.incrementAndGet();
        try (PreparedStatement insert = floor.prepareStatement("INSERT INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS')")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        floor.commit();
        try (PreparedStatement lock = floor.prepareStatement("SELECT status FROM bench_floor WHERE id = ? FOR UPDATE")) {
            lock.setString(1, id);
            try (ResultSet rs = lock.executeQuery()) {
                rs.next();
            }
        }
        int n;
        try (PreparedStatement update = floor.prepareStatement("UPDATE bench_floor SET status = 'COMPLETED', response = ? WHERE id = ?")) {
            update.setBytes(1, response);
            update.setString(2, id);
            n = update.executeUpdate();
        }
        floor.commit();
        return n;
    }

    /** A new key through the engine and the JPA store: claim, then complete. */
    @Benchmark
    public Object firstRequestThroughTheEngine() {
        ScopedKey key = new ScopedKey("bench", "anonymous", "k" + sequence.incrementAndGet());
        Decision.Proceed p = (Decision.Proceed) engine.begin(key, "fp", null, POLICY);
        engine.complete(p.ticket(), response);
        return p;
    }
}
