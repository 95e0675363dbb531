package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The functional API on H2; the assertions are in FunctionalApiContract. */
class H2FunctionalApiTest extends FunctionalApiContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
