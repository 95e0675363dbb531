package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The functional API on Postgres; the assertions are in FunctionalApiContract. */
class PostgresFunctionalApiTest extends FunctionalApiContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
