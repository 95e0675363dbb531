package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

/** Optimistic claims on MariaDB; the assertions are in OptimisticClaimContract. */
class MariaDbOptimisticClaimTest extends OptimisticClaimContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    /** The record's INSERT IGNORE with its own lock wait. */
    @Override
    String recordInsert() {
        return "SET STATEMENT innodb_lock_wait_timeout = 1 FOR INSERT IGNORE INTO idempotency_record";
    }
}
