package dev.idempotency.contract;

import dev.idempotency.testing.TestDatabase;

/** The first-answer contract's generated schedules on Postgres; the property and its invariants are in FirstAnswerContract. */
class PostgresFirstAnswerContractTest extends FirstAnswerContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
