package dev.idempotency.store.jpa;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.IdempotencyRecord;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * MariaDB (and MySQL's protocol): leased claims are portable; the atomic claim is {@code INSERT IGNORE} with its own
 * lock wait ({@code SET STATEMENT innodb_lock_wait_timeout = n FOR ...}, whole seconds).
 */
// Not for leased claims: INSERT IGNORE takes a shared lock on the existing row, and takers of an expired lease then each
// want the exclusive lock on it: InnoDB deadlocks them (found by the 8-takers test). An atomic claim meets that only for
// an expired record raced by several callers: the deadlock victim's transaction rolls back and its next attempt replays
// or waits.
final class MariaDbDialect extends Dialect {

    private static final String ATOMIC = "SET STATEMENT innodb_lock_wait_timeout = %d FOR INSERT IGNORE INTO idempotency_record (%s) VALUES (%s)";
    /** The statement for each lock wait in whole seconds (a few distinct ones: the configured waits). */
    private final ConcurrentHashMap<Long, NativeStatement[]> bySeconds = new ConcurrentHashMap<>();

    @Override
    NativeStatement atomicInsert(String id, IdempotencyRecord r, Duration lockWait) {
        NativeStatement[] forWait = bySeconds.computeIfAbsent(wholeSeconds(lockWait), seconds -> java.util.Arrays.stream(Shape.values())
                .map(shape -> {
                    String sql = ATOMIC.formatted(seconds, shape.columns(), shape.placeholders());
                    return new NativeStatement(sql, JdbcStatement.of(sql), null, 0, false);
                }).toArray(NativeStatement[]::new));
        NativeStatement template = forWait[Shape.of(r).ordinal()];
        return new NativeStatement(template.jpaSql(), template.jdbc(), values(id, r), 0, false);
    }

    @Override
    String clockQuery() {
        return "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
    }

    /** 1205 ER_LOCK_WAIT_TIMEOUT. */
    @Override
    Claim.Busy busy(SQLException e) {
        return busy(e, e.getErrorCode() == 1205);
    }

    /** 1213 ER_LOCK_DEADLOCK (SQLState 40001): InnoDB's deadlock victim, and Galera's certification failure. */
    @Override
    boolean lostToAnotherCommit(SQLException e) {
        return e.getErrorCode() == 1213 || state(e).equals("40001");
    }
}
