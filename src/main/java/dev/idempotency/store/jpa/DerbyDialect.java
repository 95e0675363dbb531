package dev.idempotency.store.jpa;

import dev.idempotency.spi.Claim;

import java.sql.SQLException;

/**
 * Apache Derby (Open Liberty's usual default data source): both claims the portable way; its clock is not read (the
 * node's own is used).
 */
final class DerbyDialect extends Dialect {

    /** XCL52 (a statement cancelled by its query timeout). */
    @Override
    Claim.Busy busy(SQLException e) {
        return busy(e, state(e).equals("XCL52"));
    }

    /** 40001 a deadlock victim. */
    @Override
    boolean lostToAnotherCommit(SQLException e) {
        return state(e).equals("40001");
    }
}
