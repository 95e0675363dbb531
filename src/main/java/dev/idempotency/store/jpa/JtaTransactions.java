package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * JTA transactions over a JTA entity manager factory. A new transaction comes from a
 * {@link RequiresNew} (the CDI {@code @Transactional(REQUIRES_NEW)} bean in a container, or a
 * {@code TransactionManager} suspend/begin/commit/resume elsewhere); the caller's transaction is found
 * through the {@link TransactionSynchronizationRegistry}.
 */
public final class JtaTransactions implements JpaTransactions {

    /** Runs work in a new JTA transaction, suspending the caller's. */
    @FunctionalInterface
    public interface RequiresNew {
        <T> T run(Supplier<T> work);
    }

    private final EntityManagerFactory emf;
    private final TransactionSynchronizationRegistry registry;
    private final RequiresNew requiresNew;

    public JtaTransactions(EntityManagerFactory emf, TransactionSynchronizationRegistry registry, RequiresNew requiresNew) {
        this.emf = emf;
        this.registry = registry;
        this.requiresNew = requiresNew;
    }

    @Override
    public <T> T inNewTransaction(Function<EntityManager, T> work) {
        return requiresNew.run(() -> inActiveTransaction(work));
    }

    @Override
    public <T> T inCurrentTransaction(Function<EntityManager, T> work) {
        return canJoin() ? inActiveTransaction(work) : inNewTransaction(work);
    }

    @Override
    public boolean canJoin() {
        return registry.getTransactionStatus() == Status.STATUS_ACTIVE;
    }

    private <T> T inActiveTransaction(Function<EntityManager, T> work) {
        EntityManager em = emf.createEntityManager();
        try {
            em.joinTransaction();
            T result = work.apply(em);
            em.flush();
            return result;
        } finally {
            // The persistence context stays until the transaction completes.
            em.close();
        }
    }
}
