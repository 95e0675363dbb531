package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** The CDI + JTA path on H2; the assertions are in JtaInterceptorContract. */
class H2JtaInterceptorTest extends JtaInterceptorContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
