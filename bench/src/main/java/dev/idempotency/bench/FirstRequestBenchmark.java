package dev.idempotency.bench;

import dev.idempotency.spi.ScopedKey;


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

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A first request (claim, then completion, each in a transaction of its own) through the JPA store, beside
 * its floor on the same database with raw JDBC (INSERT+COMMIT, then SELECT ... FOR UPDATE + UPDATE + COMMIT)
 * and beside the peer, Camel's {@code JpaMessageIdRepository} ({@code add}, then {@code confirm}). Resource-local
 * transactions (Java SE) over an Agroal pool, one thread. {@code records} finished rows are in the table first
 * (10^3 to 10^6: how the cost grows with what is stored).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FirstRequestBenchmark {

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    @Param({"1000"})
    public int records;

    Subjects subjects;
    Connection floor;
    final AtomicLong sequence = new AtomicLong();
    final ScopedKey known = new ScopedKey("bench", "anonymous", "known");

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(records);
        subjects = new Subjects(database, 16);
        floor = database.connect();
        floor.setAutoCommit(false);
        subjects.firstRequest(known.key());
        subjects.camel.add("known");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        floor.close();
        subjects.close();
    }

    /** The floor: the two short transactions, in raw JDBC. */
    @Benchmark
    public int floorInsertThenLockedUpdate() throws Exception {
        return Floor.insertThenLockedUpdate(floor, "f" + sequence.incrementAndGet(), subjects.response);
    }

    /** A new key through the engine and the JPA store: claim, then complete. */
    @Benchmark
    public Object firstRequestThroughTheEngine() {
        return subjects.firstRequest("k" + sequence.incrementAndGet());
    }

    /** The peer: Camel's JPA repository, eager add, then confirm (it stores no response, and confirm is a no-op). */
    @Benchmark
    public boolean camelJpaAddThenConfirm() {
        return subjects.camelAddThenConfirm("c" + sequence.incrementAndGet());
    }

    /**
     * A duplicate of a finished key that the store has to answer (no cache in front): one statement on
     * PostgreSQL (the claim's insert does nothing), a read elsewhere.
     */
    @Benchmark
    public Object duplicateThroughTheStore() {
        return subjects.engine.begin(known, "fp", null, Subjects.POLICY);
    }

    /** The peer: Camel's JPA repository told of a known key (a query in a transaction). */
    @Benchmark
    public boolean camelJpaDuplicate() {
        if (subjects.camel.add("known")) {
            throw new IllegalStateException("a known key was new to Camel");
        }
        return false;
    }

    /** The raw-JDBC floor's two transactions, shared by the benchmarks. */
    static final class Floor {
        private Floor() {
        }

        static int insertThenLockedUpdate(Connection c, String id, byte[] response) throws Exception {
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS')")) {
                insert.setString(1, id);
                insert.executeUpdate();
            }
            c.commit();
            try (PreparedStatement lock = c.prepareStatement("SELECT status FROM bench_floor WHERE id = ? FOR UPDATE")) {
                lock.setString(1, id);
                try (ResultSet rs = lock.executeQuery()) {
                    rs.next();
                }
            }
            int n;
            try (PreparedStatement update = c.prepareStatement("UPDATE bench_floor SET status = 'COMPLETED', response = ? WHERE id = ?")) {
                update.setBytes(1, response);
                update.setString(2, id);
                n = update.executeUpdate();
            }
            c.commit();
            return n;
        }
    }
}
