package dev.idempotency.store;

import dev.idempotency.testing.TestDatabase;

/** The JPA store contract on Postgres; the assertions are in JpaStoreContract. */
class PostgresJpaStoreTest extends JpaStoreContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRES;
    }
}
