package dev.idempotency.atomic;

/**
 * Atomic claims on PostgreSQL with every statement through JPA, as on an application's persistence unit (the store
 * then has no data source of its own for plain JDBC); the assertions are in AtomicClaimContract.
 */
class PostgresAtomicClaimThroughJpaTest extends PostgresAtomicClaimTest {
    @Override
    boolean jdbcHotPath() {
        return false;
    }
}
