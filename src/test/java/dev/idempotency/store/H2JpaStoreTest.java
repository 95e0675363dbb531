package dev.idempotency.store;

import dev.idempotency.testing.TestDatabase;

/** The JPA store contract on H2; the assertions are in JpaStoreContract. */
class H2JpaStoreTest extends JpaStoreContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
