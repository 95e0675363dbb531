package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The CDI + JTA path on Postgres. */
class PostgresJtaInterceptorTest extends JtaInterceptorContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
