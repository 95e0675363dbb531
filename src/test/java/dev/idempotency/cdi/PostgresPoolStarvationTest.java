package dev.idempotency.cdi;

import dev.idempotency.testing.TestDatabase;

/** More calls than connections on Postgres; the assertions are in PoolStarvationContract. */
class PostgresPoolStarvationTest extends PoolStarvationContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
