package dev.idempotency.bench;

import dev.idempotency.IdempotencyException;
import dev.idempotency.core.Decision;
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
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 8 threads racing one key: one operation is one race, on a new key, of 8 threads released together; it ends
 * when all 8 have their answer. Exactly one may run (checked on every race: a race with another count of winners
 * fails the benchmark). The engine rejects the losers (in progress) or replays to those that arrive after the
 * completion; the raw-JDBC floor lets the losers fail on the primary key; Camel's losers get {@code false} from
 * {@code add}, or its exception when their insert lost on the unique constraint.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RaceOneKeyBenchmark {

    static final int RACERS = 8;

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    Subjects subjects;
    final Connection[] floors = new Connection[RACERS];
    ExecutorService racers;
    final AtomicLong sequence = new AtomicLong();

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(1000);
        subjects = new Subjects(database, 32);
        for (int i = 0; i < RACERS; i++) {
            floors[i] = database.connect();
            floors[i].setAutoCommit(false);
        }
        racers = Executors.newFixedThreadPool(RACERS);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        racers.shutdownNow();
        for (Connection c : floors) {
            c.close();
        }
        subjects.close();
    }

    /** Runs one race: each racer returns whether it executed; exactly one must have. */
    int race(RacerTask task) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Boolean>> answers = new ArrayList<>(RACERS);
        for (int i = 0; i < RACERS; i++) {
            int racer = i;
            answers.add(racers.submit((Callable<Boolean>) () -> {
                start.await();
                return task.run(racer);
            }));
        }
        start.countDown();
        int winners = 0;
        for (Future<Boolean> answer : answers) {
            winners += answer.get() ? 1 : 0;
        }
        if (winners != 1) {
            throw new IllegalStateException(winners + " racers executed the same key");
        }
        return winners;
    }

    interface RacerTask {
        boolean run(int racer) throws Exception;
    }

    /** The floor: every racer inserts the row; the one whose insert committed then locks and updates it. */
    @Benchmark
    public int floorRaceOnThePrimaryKey() throws Exception {
        String id = "f" + sequence.incrementAndGet();
        return race(racer -> {
            Connection c = floors[racer];
            try {
                return FirstRequestBenchmark.Floor.insertThenLockedUpdate(c, id, subjects.response) == 1;
            } catch (SQLException duplicate) {
                c.rollback();
                return false;
            }
        });
    }

    /** The library: one claims and completes, the others are told "in progress" or get the replay. */
    @Benchmark
    public int raceThroughTheEngine() throws Exception {
        ScopedKey key = new ScopedKey("bench", "anonymous", "k" + sequence.incrementAndGet());
        return race(racer -> {
            try {
                Decision d = subjects.engine.begin(key, "fp", null, Subjects.POLICY);
                if (d instanceof Decision.Proceed p) {
                    subjects.engine.complete(p.ticket(), subjects.response);
                    return true;
                }
                return false;
            } catch (IdempotencyException inProgress) {
                return false;
            }
        });
    }

    /** The peer: Camel's JPA repository; the racer whose add returned true confirms. */
    @Benchmark
    public int raceThroughCamelJpa() throws Exception {
        String key = "c" + sequence.incrementAndGet();
        return race(racer -> {
            try {
                if (subjects.camel.add(key)) {
                    return subjects.camel.confirm(key);
                }
                return false;
            } catch (RuntimeException lostOnTheUniqueConstraint) {
                return false;
            }
        });
    }
}
