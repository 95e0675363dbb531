package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.EntityTransaction;

import java.util.function.Function;

/** Resource-local transactions: each unit of work gets its own entity manager and transaction. */
public final class ResourceLocalTransactions implements JpaTransactions {

    private final EntityManagerFactory emf;

    public ResourceLocalTransactions(EntityManagerFactory emf) {
        this.emf = emf;
    }

    @Override
    public <T> T inNewTransaction(Function<EntityManager, T> work) {
        EntityManager em = emf.createEntityManager();
        EntityTransaction tx = em.getTransaction();
        try {
            tx.begin();
            T result = work.apply(em);
            tx.commit();
            return result;
        } finally {
            if (tx.isActive()) {
                tx.rollback();
            }
            em.close();
        }
    }

    @Override
    public <T> T inCurrentTransaction(Function<EntityManager, T> work) {
        return inNewTransaction(work);
    }

    @Override
    public boolean canJoin() {
        return false;
    }
}
