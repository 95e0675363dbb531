package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The functional API on MariaDb; the assertions are in FunctionalApiContract. */
class MariaDbFunctionalApiTest extends FunctionalApiContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
