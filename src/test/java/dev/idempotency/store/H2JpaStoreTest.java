package dev.idempotency.store;

import dev.idempotency.testing.TestDatabase;

/** The JPA store contract on H2. */
class H2JpaStoreTest extends JpaStoreContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }
}
