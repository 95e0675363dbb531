package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

import java.util.List;

/** Atomic claims on PostgreSQL; the assertions are in AtomicClaimContract. */
class PostgresAtomicClaimTest extends AtomicClaimContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }

    /** One statement: insert-if-absent with its own lock timeout. */
    @Override
    List<String> claimStatements() {
        return List.of("WITH s AS (SELECT current_setting('lock_timeout')");
    }
}
