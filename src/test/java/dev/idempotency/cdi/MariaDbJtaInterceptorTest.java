package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The CDI + JTA path on MariaDb; the assertions are in JtaInterceptorContract. */
class MariaDbJtaInterceptorTest extends JtaInterceptorContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
