package dev.idempotency.bench;

import dev.idempotency.core.AtomicCall;
import dev.idempotency.core.AtomicOutcome;
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
 * Atomic claims: the claim row, one business row and the stored 1 KiB answer in one JTA
 * transaction, beside what they are measured against.
 *
 * <ul>
 * <li>{@code businessTransactionAlone}: the business transaction without idempotency (the joined target's yardstick);</li>
 * <li>{@code atomicInTheCallersTransaction}: the caller begins and commits; the claim and the answer join it;</li>
 * <li>{@code atomicInTheLibrarysTransaction}: no caller transaction; the library begins one around the call;</li>
 * <li>{@code floorSameStatementsOneTransaction}: raw JDBC, no JTA: the claim insert as the database takes it
 *     best, the business insert, the update with the answer, one commit (the own-transaction target's floor);</li>
 * <li>{@code floorSameStatementsInTheCallersTransaction}: the same statements in raw JDBC inside the caller's
 *     JTA transaction (the joined path's floor);</li>
 * <li>{@code camelJpaAddBusinessConfirm}: Camel's JPA repository's add, the business transaction, confirm;</li>
 * <li>{@code optimisticInTheCallersTransaction}, {@code optimisticInTheLibrarysTransaction}: the optimistic claim (the
 *     library's default local cache in front), the business row and one insert of the finished record;</li>
 * <li>{@code floorBusinessAndOneInsertInTheCallersTransaction}: the business transaction plus one raw insert of a
 *     finished record with the 1 KiB answer, in the caller's JTA transaction (the optimistic target's yardstick);</li>
 * <li>{@code floorBusinessAndOneInsertOneTransaction}: the same two statements in raw JDBC, no JTA, one commit.</li>
 * <li>{@code floorLibrarysStatementsOneTransaction}: the optimistic claim's own statements, as it sends them, in raw
 *     JDBC, no JTA, one commit: the business insert and the library's insert of the finished record into
 *     {@code idempotency_record} (all its columns and its indexes: the primary key and the expiry; on PostgreSQL with a
 *     query timeout as its lock bound, on MariaDB with {@code SET STATEMENT innodb_lock_wait_timeout}). Where the floor above measures a
 *     three-column table, this one measures what the library's statement costs the database, so that the ratio to it
 *     is the library's own overhead (JTA, the pool's enlistment, the engine, the cache).</li>
 * <li>{@code floorLibrarysAtomicStatementsOneTransaction}, {@code floorLibrarysAtomicStatementsInAJtaTransaction}: the
 *     atomic claim's own three statements (the library's insert of an in-progress record, the business insert, the
 *     library's fenced update with the answer), raw JDBC, without and with JTA.</li>
 * <li>{@code floorOptimisticStatementsOneTransaction}, {@code floorOptimisticStatementsInAJtaTransaction}: the optimistic
 *     claim's fair floor, its three statements as it sends them (the read of the key, the business insert, the library's
 *     insert of the finished record), raw JDBC, without and with JTA: the hand-written twin's statements.</li>
 * <li>{@code floorLibrarysStatementsInAJtaTransaction}: the same two statements in raw JDBC in a JTA transaction of
 *     their own (Narayana, the enlisting pool): the ratio of the library to it is the library's overhead beyond JTA.</li>
 * </ul>
 * Average time per call with one thread; {@code -bm thrpt -t 8} gives the distinct-keys throughput.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AtomicClaimBenchmark {

    static final Policy POLICY = Subjects.POLICY;

    @Param({"h2", "postgresql", "mariadb"})
    public Database database;

    JtaSubjects subjects;
    TransactionManager tm;
    IdempotencyEngine engine;
    JpaMessageIdRepository camel;
    String floorClaim;
    final AtomicLong sequence = new AtomicLong();
    final byte[] response = new byte[1024];

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        database.reset(1000);
        subjects = new JtaSubjects(database);
        tm = subjects.tm;
        engine = subjects.engine;
        camel = subjects.camel;
        floorClaim = switch (database) {
            case postgresql -> "INSERT INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS') ON CONFLICT DO NOTHING";
            case mariadb, galera -> "INSERT IGNORE INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS')";
            case h2 -> "INSERT INTO bench_floor (id, status) VALUES (?, 'IN_PROGRESS')";
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        subjects.close();
    }

    /** Each thread's own raw connection for the floor. */
    @State(Scope.Thread)
    public static class FloorConnection {
        Connection c;

        @Setup(Level.Trial)
        public void open(AtomicClaimBenchmark b) throws Exception {
            c = b.database.connect();
            c.setAutoCommit(false);
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            c.close();
        }
    }

    void business(String id) throws Exception {
        subjects.business(id);
    }

    /** A floor's statements for one new key on a connection; the rows they wrote. */
    @FunctionalInterface
    interface Statements {
        int send(Connection c, String id) throws Exception;
    }

    /** A floor's statements for a new key in a JTA transaction of their own, on the pool's enlisted connection. */
    int inAJtaTransaction(String prefix, Statements statements) throws Exception {
        String id = prefix + sequence.incrementAndGet();
        tm.begin();
        int n;
        try (Connection c = subjects.jtaPool.getConnection()) {
            n = statements.send(c, id);
        }
        tm.commit();
        return n;
    }

    /** A floor's statements for a new key on the thread's own raw connection, one commit. */
    int inOneTransaction(FloorConnection floor, String prefix, Statements statements) throws Exception {
        int n = statements.send(floor.c, prefix + sequence.incrementAndGet());
        floor.c.commit();
        return n;
    }

    /** The floor's statements on one connection: the claim insert, the business insert, the update with the answer. */
    int floorStatements(Connection c, String id) throws Exception {
        try (PreparedStatement claim = c.prepareStatement(floorClaim)) {
            claim.setString(1, id);
            claim.executeUpdate();
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_business (id, amount) VALUES (?, 1250)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        try (PreparedStatement update = c.prepareStatement(
                "UPDATE bench_floor SET status = 'COMPLETED', response = ? WHERE id = ? AND status = 'IN_PROGRESS'")) {
            update.setBytes(1, response);
            update.setString(2, id);
            return update.executeUpdate();
        }
    }

    /** The call every claim runs: one business row; its answer the 1 KiB response; no failure kept. */
    AtomicCall<String> businessCall(String id) {
        return new AtomicCall<>() {
            @Override
            public String run() throws Exception {
                business(id);
                return id;
            }

            @Override
            public byte[] response(String result) {
                return response;
            }

            @Override
            public boolean keeps(Throwable failure) {
                return false;
            }

            @Override
            public byte[] failure(Throwable failure) {
                return null;
            }
        };
    }

    AtomicOutcome<String> atomic(String id) throws Exception {
        return engine.runAtomic(new ScopedKey("bench", "anonymous", id), "fp", null, POLICY, businessCall(id));
    }

    /** The optimistic claim's floor: the business insert, then one insert of the finished record with its answer. */
    int floorBusinessAndOneInsert(Connection c, String id) throws Exception {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_business (id, amount) VALUES (?, 1250)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        try (PreparedStatement record = c.prepareStatement("INSERT INTO bench_floor (id, status, response) VALUES (?, 'COMPLETED', ?)")) {
            record.setString(1, id);
            record.setBytes(2, response);
            return record.executeUpdate();
        }
    }

    static final String RECORD_COLUMNS = "id, namespace, principal, idem_key, status, fingerprint, attempts, first_seen, last_seen,"
            + " expires_at, lease_until, owner, version, response, completed_at";

    /**
     * The library's insert of a record, as it sends it on this database (its dialect): the optimistic claim's of a finished
     * record, or the atomic claim's of one in progress (on PostgreSQL the atomic one sets and restores its lock_timeout;
     * the optimistic one is plain, bounded by a query timeout).
     */
    String librarysRecordInsert(boolean finished) {
        return switch (database) {
            case postgresql -> finished ? "INSERT INTO idempotency_record (" + RECORD_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?,"
                    + " ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
                    : "WITH s AS (SELECT current_setting('lock_timeout') AS old, set_config('lock_timeout', ?, true) AS lt),"
                    + " i AS (INSERT INTO idempotency_record (" + RECORD_COLUMNS + ") SELECT CAST(? AS VARCHAR), CAST(? AS VARCHAR),"
                    + " CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS INTEGER),"
                    + " CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS VARCHAR),"
                    + " CAST(? AS BIGINT), CAST(? AS BYTEA), CAST(? AS BIGINT) FROM s ON CONFLICT DO NOTHING RETURNING 1)"
                    + " SELECT (SELECT count(*) FROM i), set_config('lock_timeout', s.old, true) FROM s";
            case mariadb, galera -> "SET STATEMENT innodb_lock_wait_timeout = 1 FOR INSERT IGNORE INTO idempotency_record ("
                    + RECORD_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
            case h2 -> "INSERT INTO idempotency_record (" + RECORD_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        };
    }

    int floorLibrarysStatements(Connection c, String id) throws Exception {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_business (id, amount) VALUES (?, 1250)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        return librarysRecordInsert(c, id, true);
    }

    /** The library's insert of a record of the key: finished with its answer (optimistic), or in progress (atomic's claim). */
    int librarysRecordInsert(Connection c, String id, boolean finished) throws Exception {
        boolean setsLockTimeout = database == Database.postgresql && !finished;
        try (PreparedStatement record = c.prepareStatement(librarysRecordInsert(finished))) {
            int i = 1;
            if (setsLockTimeout) {
                record.setString(i++, "1000ms");
            } else if (database == Database.postgresql) {
                record.setQueryTimeout(1);
            }
            long now = System.currentTimeMillis();
            record.setString(i++, new ScopedKey("bench", "anonymous", id).id());
            record.setString(i++, "bench");
            record.setString(i++, "anonymous");
            record.setString(i++, id);
            record.setString(i++, finished ? "COMPLETED" : "IN_PROGRESS");
            record.setString(i++, "fp");
            record.setInt(i++, 1);
            record.setLong(i++, now);
            record.setLong(i++, now);
            record.setLong(i++, now + 86_400_000L);
            if (finished) {
                record.setNull(i++, java.sql.Types.BIGINT);
            } else {
                record.setLong(i++, now + 60_000L);
            }
            record.setString(i++, "bench");
            record.setLong(i++, 1);
            if (finished) {
                record.setBytes(i++, response);
                record.setLong(i, now);
            } else {
                record.setNull(i++, database == Database.postgresql ? java.sql.Types.BINARY : java.sql.Types.BLOB);
                record.setNull(i, java.sql.Types.BIGINT);
            }
            if (setsLockTimeout) {
                try (java.sql.ResultSet rs = record.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
            return record.executeUpdate();
        }
    }

    /**
     * The atomic claim's own statements, as it sends them: the library's insert of an in-progress record, the business
     * insert, and the library's fenced update that finishes it with its answer.
     */
    int floorLibrarysAtomicStatements(Connection c, String id) throws Exception {
        if (librarysRecordInsert(c, id, false) != 1) {
            throw new IllegalStateException("the claim of a new key inserted nothing");
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_business (id, amount) VALUES (?, 1250)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
        try (PreparedStatement update = c.prepareStatement("UPDATE idempotency_record SET status = ?, response = ?, last_seen = ?,"
                + " completed_at = ?, lease_until = NULL WHERE id = ? AND status = 'IN_PROGRESS' AND owner = ? AND version = ?")) {
            long now = System.currentTimeMillis();
            update.setString(1, "COMPLETED");
            update.setBytes(2, response);
            update.setLong(3, now);
            update.setLong(4, now);
            update.setString(5, new ScopedKey("bench", "anonymous", id).id());
            update.setString(6, "bench");
            update.setLong(7, 1);
            int n = update.executeUpdate();
            if (n != 1) {
                throw new IllegalStateException("the answer of a claimed key updated " + n + " rows");
            }
            return n;
        }
    }

    @Benchmark
    public int floorLibrarysAtomicStatementsOneTransaction(FloorConnection floor) throws Exception {
        return inOneTransaction(floor, "m", this::floorLibrarysAtomicStatements);
    }

    /** The atomic claim's own three statements in the caller's JTA transaction (the joined atomic call's floor). */
    @Benchmark
    public int floorLibrarysAtomicStatementsInAJtaTransaction() throws Exception {
        return inAJtaTransaction("n", this::floorLibrarysAtomicStatements);
    }

    /**
     * The optimistic claim's statements as it sends them since it reads the key before its work (a retry whose record the
     * cache lost is answered, not run): the read of the key by its primary key, the business insert, the library's insert
     * of the finished record; one commit. The hand-written twin's statements (a read, the business row, the answer's row),
     * on the library's table: the optimistic claim's fair floor.
     */
    int floorOptimisticStatements(Connection c, String id) throws Exception {
        try (PreparedStatement read = c.prepareStatement("SELECT 1 FROM idempotency_record WHERE id = ?")) {
            read.setString(1, new ScopedKey("bench", "anonymous", id).id());
            try (java.sql.ResultSet rs = read.executeQuery()) {
                if (rs.next()) {
                    throw new IllegalStateException("a new key was found");
                }
            }
        }
        return floorLibrarysStatements(c, id);
    }

    @Benchmark
    public int floorOptimisticStatementsOneTransaction(FloorConnection floor) throws Exception {
        return inOneTransaction(floor, "r", this::floorOptimisticStatements);
    }

    /** The same three statements in a JTA transaction of their own, on the pool's enlisted connection. */
    @Benchmark
    public int floorOptimisticStatementsInAJtaTransaction() throws Exception {
        return inAJtaTransaction("s", this::floorOptimisticStatements);
    }

    @Benchmark
    public int floorLibrarysStatementsOneTransaction(FloorConnection floor) throws Exception {
        return inOneTransaction(floor, "l", this::floorLibrarysStatements);
    }

    /**
     * The same two statements in a JTA transaction of their own (Narayana's begin and commit, the pool's enlisted
     * connection), as the library's own transaction runs them: what JTA costs, apart from the library.
     */
    @Benchmark
    public int floorLibrarysStatementsInAJtaTransaction() throws Exception {
        return inAJtaTransaction("k", this::floorLibrarysStatements);
    }

    AtomicOutcome<String> optimistic(String id) throws Exception {
        return subjects.cachedEngine.flow(dev.idempotency.ClaimMode.OPTIMISTIC).run(new ScopedKey("bench", "anonymous", id), "fp",
                null, POLICY, businessCall(id));
    }

    @Benchmark
    public Object optimisticInTheCallersTransaction() throws Exception {
        String id = "o" + sequence.incrementAndGet();
        tm.begin();
        AtomicOutcome<String> outcome = optimistic(id);
        tm.commit();
        return outcome;
    }

    @Benchmark
    public Object optimisticInTheLibrarysTransaction() throws Exception {
        return optimistic("p" + sequence.incrementAndGet());
    }

    /**
     * {@link #optimisticInTheLibrarysTransaction} with a local Infinispan cache in front instead of the library's own
     * (the default until 2026-11-26): what the cache's write of the finished record costs each first request.
     */
    @Benchmark
    public Object optimisticWithAnInfinispanLocalCacheInTheLibrarysTransaction() throws Exception {
        String id = "e" + sequence.incrementAndGet();
        return subjects.infinispanCachedEngine.flow(dev.idempotency.ClaimMode.OPTIMISTIC).run(new ScopedKey("bench", "anonymous", id),
                "fp", null, POLICY, businessCall(id));
    }

    @Benchmark
    public int floorBusinessAndOneInsertInTheCallersTransaction() throws Exception {
        return inAJtaTransaction("h", this::floorBusinessAndOneInsert);
    }

    @Benchmark
    public int floorBusinessAndOneInsertOneTransaction(FloorConnection floor) throws Exception {
        return inOneTransaction(floor, "i", this::floorBusinessAndOneInsert);
    }

    @Benchmark
    public String businessTransactionAlone() throws Exception {
        String id = "b" + sequence.incrementAndGet();
        tm.begin();
        business(id);
        tm.commit();
        return id;
    }

    @Benchmark
    public Object atomicInTheCallersTransaction() throws Exception {
        String id = "j" + sequence.incrementAndGet();
        tm.begin();
        AtomicOutcome<String> outcome = atomic(id);
        tm.commit();
        return outcome;
    }

    @Benchmark
    public Object atomicInTheLibrarysTransaction() throws Exception {
        return atomic("a" + sequence.incrementAndGet());
    }

    /**
     * The atomic claim as it runs by default: the same engine with the local cache in front, which its first request
     * pays one write of the finished record to (the engine of {@link #atomicInTheLibrarysTransaction} has no cache).
     */
    @Benchmark
    public Object atomicWithTheLocalCacheInTheLibrarysTransaction() throws Exception {
        String id = "q" + sequence.incrementAndGet();
        return subjects.cachedEngine.flow(dev.idempotency.ClaimMode.ATOMIC).run(new ScopedKey("bench", "anonymous", id), "fp",
                null, POLICY, businessCall(id));
    }

    @Benchmark
    public int floorSameStatementsOneTransaction(FloorConnection floor) throws Exception {
        return inOneTransaction(floor, "f", this::floorStatements);
    }

    /**
     * The joined path's floor: the caller's JTA transaction with the same three statements in raw JDBC on the
     * enlisted connection, one commit.
     */
    @Benchmark
    public int floorSameStatementsInTheCallersTransaction() throws Exception {
        return inAJtaTransaction("g", this::floorStatements);
    }

    @Benchmark
    public boolean camelJpaAddBusinessConfirm() throws Exception {
        String id = "c" + sequence.incrementAndGet();
        if (!camel.add(id)) {
            throw new IllegalStateException("a new key was not new to Camel");
        }
        tm.begin();
        business(id);
        tm.commit();
        return camel.confirm(id);
    }
}
