package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The CDI + JTA path on Postgres; the assertions are in JtaInterceptorContract. */
class PostgresJtaInterceptorTest extends JtaInterceptorContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
