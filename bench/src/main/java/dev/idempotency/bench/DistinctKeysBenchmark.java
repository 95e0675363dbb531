package dev.idempotency.bench;



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

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    Subjects subjects;
    final AtomicLong sequence = new AtomicLong();

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(1000);
        subjects = new Subjects(database, 16);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        subjects.close();
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
        return FirstRequestBenchmark.Floor.insertThenLockedUpdate(floor.c, "f" + sequence.incrementAndGet(), subjects.response);
    }

    @Benchmark
    public Object firstRequestThroughTheEngine() {
        return subjects.firstRequest("k" + sequence.incrementAndGet());
    }

    @Benchmark
    public boolean camelJpaAddThenConfirm() {
        return subjects.camelAddThenConfirm("c" + sequence.incrementAndGet());
    }
}
