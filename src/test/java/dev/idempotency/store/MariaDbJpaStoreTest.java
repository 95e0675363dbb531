package dev.idempotency.store;

import dev.idempotency.testing.TestDatabase;

/** The JPA store contract on MariaDb; the assertions are in JpaStoreContract. */
class MariaDbJpaStoreTest extends JpaStoreContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
