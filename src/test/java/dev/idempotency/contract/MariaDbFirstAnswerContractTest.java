package dev.idempotency.contract;

import dev.idempotency.testing.TestDatabase;

/** The first-answer contract's generated schedules on MariaDb; the property and its invariants are in FirstAnswerContract. */
class MariaDbFirstAnswerContractTest extends FirstAnswerContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
