package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** More calls than connections on H2; the assertions are in PoolStarvationContract. */
class H2PoolStarvationTest extends PoolStarvationContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
