package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;

import java.util.function.Function;

/**
 * How the JPA store runs its work: in a transaction of its own, or inside the caller's. Two
 * implementations: resource-local (Java SE) and JTA (a Jakarta EE server, or Narayana in Java SE).
 */
public interface JpaTransactions {

    /** Runs the work in a new transaction that commits before this returns (the caller's is suspended). */
    <T> T inNewTransaction(Function<EntityManager, T> work);

    /**
     * Runs the work inside the caller's active transaction when there is one this store can join, else in a
     * new transaction. The answer says which.
     */
    <T> T inCurrentTransaction(Function<EntityManager, T> work);

    /** Whether {@link #inCurrentTransaction} would join the caller's transaction right now. */
    boolean canJoin();
}
