package dev.idempotency.contract;

import dev.idempotency.testing.TestDatabase;

/** The first-answer contract's generated schedules on H2; the property and its invariants are in FirstAnswerContract. */
class H2FirstAnswerContractTest extends FirstAnswerContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
