package dev.idempotency.store.jpa;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.IdempotencyRecord;

import java.sql.SQLException;
import java.time.Duration;

/**
 * H2: leased claims are portable; the atomic claim is one {@code MERGE ... WHEN NOT MATCHED THEN INSERT}: no row for a
 * committed key (instead of a read and an insert), and, like a plain insert, a wait for another transaction's
 * uncommitted row of the key, then a duplicate-key error if it committed. Its wait is bounded by a query timeout (whole
 * seconds), as the portable insert's.
 */
final class H2Dialect extends Dialect {

    private static final String ATOMIC = "MERGE INTO idempotency_record t USING (VALUES (%2$s)) s (%1$s) ON t.id = s.id"
            + " WHEN NOT MATCHED THEN INSERT (%1$s) VALUES (%3$s)";
    /** The atomic insert of each {@link Shape}. */
    private static final NativeStatement[] ATOMIC_BY_SHAPE = java.util.Arrays.stream(Shape.values()).map(shape -> {
        String sql = ATOMIC.formatted(shape.columns(), shape.typedValues("VARBINARY"), sourced(shape.columns()));
        return new NativeStatement(sql, JdbcStatement.of(sql), null, 0, false);
    }).toArray(NativeStatement[]::new);

    /** {@code "a, b"} as {@code "s.a, s.b"}: the columns of a MERGE's source. */
    private static String sourced(String columns) {
        return "s." + columns.replace(", ", ", s.");
    }

    @Override
    NativeStatement atomicInsert(String id, IdempotencyRecord r, Duration lockWait) {
        NativeStatement template = ATOMIC_BY_SHAPE[Shape.of(r).ordinal()];
        return new NativeStatement(template.jpaSql(), template.jdbc(), values(id, r), queryTimeoutSeconds(lockWait), false);
    }

    @Override
    boolean plainReadSeesCommittedRow() {
        return true;
    }

    @Override
    String clockQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)";
    }

    /** 50200 LOCK_TIMEOUT_1, HYT00 (a query timeout). */
    @Override
    Claim.Busy busy(SQLException e) {
        return busy(e, e.getErrorCode() == 50200 || state(e).equals("HYT00"));
    }

    /** 40001 a deadlock. */
    @Override
    boolean lostToAnotherCommit(SQLException e) {
        return state(e).equals("40001");
    }
}
