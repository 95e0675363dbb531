package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

import java.util.List;

/** Atomic claims on MariaDB; the assertions are in AtomicClaimContract. */
class MariaDbAtomicClaimTest extends AtomicClaimContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    /** One statement: INSERT IGNORE with its own lock wait. */
    @Override
    List<String> claimStatements() {
        return List.of("SET STATEMENT innodb_lock_wait_timeout = 1 FOR INSERT IGNORE INTO idempotency_record");
    }
}
