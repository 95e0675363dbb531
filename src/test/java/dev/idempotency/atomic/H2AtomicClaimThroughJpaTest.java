package dev.idempotency.atomic;

/**
 * Atomic claims on H2 with every statement through JPA, as on an application's persistence unit (the store then has
 * no data source of its own for plain JDBC); the assertions are in AtomicClaimContract.
 */
class H2AtomicClaimThroughJpaTest extends H2AtomicClaimTest {
    @Override
    boolean jdbcHotPath() {
        return false;
    }
}
