package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

/** Optimistic claims on PostgreSQL; the assertions are in OptimisticClaimContract. */
class PostgresOptimisticClaimTest extends OptimisticClaimContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }

    /** The record's insert-if-absent with its own lock timeout. */
    @Override
    String recordInsert() {
        return "WITH s AS (SELECT current_setting('lock_timeout')";
    }
}
