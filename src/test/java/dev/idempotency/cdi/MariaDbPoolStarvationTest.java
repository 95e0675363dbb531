package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** More calls than connections on MariaDb; the assertions are in PoolStarvationContract. */
class MariaDbPoolStarvationTest extends PoolStarvationContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
