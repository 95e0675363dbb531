package dev.idempotency.store.jpa;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.IdempotencyRecord;

import java.sql.SQLException;
import java.time.Duration;

/**
 * PostgreSQL (9.5 and later): {@code INSERT ... ON CONFLICT DO NOTHING} for every claim; the atomic one in one
 * statement that sets {@code lock_timeout} for its own wait (in milliseconds) and puts it back; the optimistic one's
 * wait bounded by a query timeout. A failed statement
 * aborts the whole transaction here, so a claim never lets one fail on purpose.
 */
final class PostgresDialect extends Dialect {

    private static final String INSERT = "INSERT INTO idempotency_record (%s) VALUES (%s) ON CONFLICT DO NOTHING";
    private static final String ATOMIC = "WITH s AS (SELECT current_setting('lock_timeout') AS old, set_config('lock_timeout', ?%d, true) AS lt),"
            + " i AS (INSERT INTO idempotency_record (%s) SELECT %s FROM s ON CONFLICT DO NOTHING RETURNING 1)"
            + " SELECT (SELECT count(*) FROM i), set_config('lock_timeout', s.old, true) FROM s";
    private static final String INSERT_PLAIN = INSERT.formatted(COLUMNS, VALUES);
    private static final String INSERT_TYPED = INSERT.formatted(COLUMNS + ", request_type", VALUES + ", ?14");
    /** The atomic insert of each {@link Shape}, the lock timeout its last value. */
    private static final NativeStatement[] ATOMIC_BY_SHAPE = java.util.Arrays.stream(Shape.values()).map(shape -> {
        String sql = ATOMIC.formatted(shape.count() + 1, shape.columns(), shape.typedValues("BYTEA"));
        return new NativeStatement(sql, JdbcStatement.of(sql), null, 0, true);
    }).toArray(NativeStatement[]::new);

    @Override
    String insertIfAbsent(boolean withRequestType) {
        return withRequestType ? INSERT_TYPED : INSERT_PLAIN;
    }

    @Override
    NativeStatement atomicInsert(String id, IdempotencyRecord r, Duration lockWait) {
        NativeStatement template = ATOMIC_BY_SHAPE[Shape.of(r).ordinal()];
        // lock_timeout 0 would mean "no limit"
        Object[] values = append(values(id, r), Math.max(1, lockWait.toMillis()) + "ms");
        return new NativeStatement(template.jpaSql(), template.jdbc(), values, 0, true);
    }

    /**
     * The optimistic claim's insert of a finished record: a plain {@code INSERT ... ON CONFLICT DO NOTHING}, its wait for
     * another transaction's row of the key bounded by a JDBC query timeout (whole seconds, at least one). The atomic
     * claim's statement sets and restores {@code lock_timeout} around its insert, which cost PostgreSQL about a tenth more
     * CPU per insert (2026-11-26); the atomic claim's row is held through the business work, so its waits are common and
     * their bound is kept to the millisecond, while another optimistic call's row of the key appears only as that call
     * commits.
     */
    @Override
    NativeStatement finishedInsert(String id, IdempotencyRecord r, Duration lockWait) {
        Shape shape = Shape.of(r);
        NativeStatement template = FINISHED_BY_SHAPE[shape.ordinal()];
        if (template == null) {
            return atomicInsert(id, r, lockWait); // not a finished record
        }
        return new NativeStatement(template.jpaSql(), template.jdbc(), values(id, r), queryTimeoutSeconds(lockWait), false);
    }

    /** The plain insert of each finished {@link Shape}; {@code null} for the others. */
    private static final NativeStatement[] FINISHED_BY_SHAPE = java.util.Arrays.stream(Shape.values()).map(shape -> {
        if (!shape.finished) {
            return null;
        }
        String sql = INSERT.formatted(shape.columns(), shape.placeholders());
        return new NativeStatement(sql, JdbcStatement.of(sql), null, 0, false);
    }).toArray(NativeStatement[]::new);

    @Override
    String clockQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
    }

    /** 55P03 lock_not_available (lock_timeout), 57014 query_canceled (a query timeout). */
    @Override
    Claim.Busy busy(SQLException e) {
        String state = state(e);
        return busy(e, state.equals("55P03") || state.equals("57014"));
    }

    /** 40001 serialization_failure, 40P01 deadlock_detected. */
    @Override
    boolean lostToAnotherCommit(SQLException e) {
        String state = state(e);
        return state.equals("40001") || state.equals("40P01");
    }
}
