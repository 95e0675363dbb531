package dev.idempotency.bench;

import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;

import jakarta.transaction.TransactionManager;

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

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The JTA-joined completion (the completion joins the business transaction, the claim has its own):
 * a business transaction that inserts one row, alone; the same with the library around it (claim, then the
 * business transaction carrying the completion); the target's yardstick, the business transaction plus one raw
 * INSERT+COMMIT; and Camel's JPA repository's {@code add} before the business transaction. JTA in Java SE:
 * Narayana, Agroal enlisting the connections, Hibernate on the JTA platform.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class JoinedCompletionBenchmark {

    static final Policy POLICY = Subjects.POLICY;

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    JtaSubjects subjects;
    TransactionManager tm;
    IdempotencyEngine engine;
    JpaMessageIdRepository camel;
    Connection floor;
    final AtomicLong sequence = new AtomicLong();
    final byte[] response = new byte[1024];

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(1000);
        subjects = new JtaSubjects(database);
        tm = subjects.tm;
        engine = subjects.engine;
        camel = subjects.camel;
        floor = database.connect();
        floor.setAutoCommit(false);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        floor.close();
        subjects.close();
    }

    void business(String id) throws Exception {
        subjects.business(id);
    }

    @Benchmark
    public String businessTransactionAlone() throws Exception {
        String id = "b" + sequence.incrementAndGet();
        tm.begin();
        business(id);
        tm.commit();
        return id;
    }

    /** The yardstick of the target: the business transaction and one short INSERT+COMMIT beside it. */
    @Benchmark
    public String businessTransactionPlusInsertCommit() throws Exception {
        String id = "y" + sequence.incrementAndGet();
        try (PreparedStatement insert = floor.prepareStatement("INSERT INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS')")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        floor.commit();
        tm.begin();
        business(id);
        tm.commit();
        return id;
    }

    /** The library: claim in its own transaction, then the business transaction with the completion joined. */
    @Benchmark
    public String businessTransactionWithJoinedCompletion() throws Exception {
        String id = "j" + sequence.incrementAndGet();
        Decision.Proceed p = (Decision.Proceed) engine.begin(new ScopedKey("bench", "anonymous", id), "fp", null, POLICY);
        tm.begin();
        business(id);
        engine.complete(p.ticket(), response);
        tm.commit();
        return id;
    }

    /** The peer: Camel's eager add in its own transaction, then the business transaction. */
    @Benchmark
    public String businessTransactionAfterCamelJpaAdd() throws Exception {
        String id = "c" + sequence.incrementAndGet();
        if (!camel.add(id)) {
            throw new IllegalStateException("a new key was not new to Camel");
        }
        tm.begin();
        business(id);
        tm.commit();
        camel.confirm(id);
        return id;
    }
}
