package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

/** Optimistic claims on PostgreSQL; the assertions are in OptimisticClaimContract. */
class PostgresOptimisticClaimTest extends OptimisticClaimContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }

    /** The record's insert-if-absent ({@code ON CONFLICT DO NOTHING}), its wait bounded by a query timeout. */
    @Override
    String recordInsert() {
        return "INSERT INTO idempotency_record";
    }
}
