package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * JTA transactions over a JTA entity manager factory. A new transaction comes from a
 * {@link RequiresNew} (the CDI {@code @Transactional(REQUIRES_NEW)} bean in a container, or a
 * {@code TransactionManager} elsewhere); the caller's transaction is found through the
 * {@link TransactionSynchronizationRegistry}.
 *
 * <p>While the caller has a transaction of its own, the new one runs on another thread (the executor's)
 * instead of suspending the caller's: some servers' default pools hand a suspended transaction's connection
 * to the new one, and committing that would commit the caller's pending writes too (seen on Payara with its
 * default H2 data source). A thread with no transaction gets a connection of its own everywhere.
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
    private final Executor detached;
    private final DataSource dataSource;

    /**
     * @param detached runs a new transaction while the caller has one (a managed executor in a server)
     */
    public JtaTransactions(EntityManagerFactory emf, TransactionSynchronizationRegistry registry, RequiresNew requiresNew,
                           Executor detached) {
        this(emf, registry, requiresNew, detached, null);
    }

    /**
     * @param dataSource the unit's JTA data source, for {@link #onJoinedConnection}: in a transaction it hands out the
     *                   connection the transaction holds (as every server's pool and Agroal with Narayana do), so
     *                   plain JDBC and the entity manager write through one connection; {@code null}: none
     */
    public JtaTransactions(EntityManagerFactory emf, TransactionSynchronizationRegistry registry, RequiresNew requiresNew,
                           Executor detached, DataSource dataSource) {
        this.emf = emf;
        this.registry = registry;
        this.requiresNew = requiresNew;
        this.detached = detached;
        this.dataSource = dataSource;
    }

    @Override
    public <T> T inNewTransaction(Function<EntityManager, T> work) {
        if (registry.getTransactionKey() == null) {
            return requiresNew.run(() -> inActiveTransaction(work));
        }
        try {
            return CompletableFuture.supplyAsync(() -> requiresNew.run(() -> inActiveTransaction(work)), detached).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    @Override
    public <T> T inCurrentTransaction(Function<EntityManager, T> work) {
        return canJoin() ? inActiveTransaction(work) : inNewTransaction(work);
    }

    @Override
    public boolean canJoin() {
        return registry.getTransactionStatus() == Status.STATUS_ACTIVE;
    }

    @Override
    public boolean hasJoinedConnections() {
        return dataSource != null;
    }

    /**
     * The handle is closed after the work; the connection stays with the transaction until it completes. The entity
     * manager of this transaction has nothing pending: each unit of work is flushed when it ends.
     *
     * <p>One physical connection per transaction is what each server's pool gives a {@code getConnection} inside a
     * transaction: WildFly's and Liberty's pools and Agroal with Narayana hand back the enlisted connection whether or not
     * a handle of it is open; Payara's and GlassFish's do so for an XA pool type, and for a {@code javax.sql.DataSource}
     * pool only while no handle of it is open (else they take a second connection from the pool for a moment). A handle is
     * therefore held only for the statements of one step and closed at once, never kept open for the transaction's life:
     * a handle kept open would make the application's own first write take that second connection on such a pool. (The
     * application's JPA provider keeps its handle until the commit, so the answer's step still meets an open handle
     * there: the README tells Payara users to use an XA pool type.) Every acquisition is bounded by the store's
     * {@link BoundedDataSource}.
     */
    @Override
    public <T> T onJoinedConnection(ConnectionWork<T> work) {
        try {
            if (dataSource instanceof BoundedDataSource bounded) {
                return bounded.onConnection(work);
            }
            try (Connection connection = dataSource.getConnection()) {
                return work.run(connection);
            }
        } catch (SQLException e) {
            throw new jakarta.persistence.PersistenceException(e.getMessage(), e);
        }
    }

    /**
     * One entity manager per transaction (kept in the registry's resources): an atomic claim and its answer, or
     * a completion and a read, share it instead of opening one each; its persistence context is cleared after
     * each unit of work. It is closed when the transaction completes.
     */
    private <T> T inActiveTransaction(Function<EntityManager, T> work) {
        EntityManager em = (EntityManager) registry.getResource(this);
        if (em == null) {
            EntityManager created = emf.createEntityManager();
            // Registered before the provider joins: Narayana ends interposed synchronizations in the reverse order of their
            // registration, so there this one closes the entity manager after the provider's own (Hibernate 7 warns of a
            // close before it). The order is not specified elsewhere; a close after the last flush is correct in any order.
            registry.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                    // the provider flushes its joined persistence context itself
                }

                @Override
                public void afterCompletion(int status) {
                    if (created.isOpen()) {
                        created.close();
                    }
                }
            });
            try {
                created.joinTransaction();
            } catch (RuntimeException e) {
                created.close(); // not kept for the transaction's next units of work
                throw e;
            }
            registry.putResource(this, created);
            em = created;
        }
        T result = work.apply(em);
        em.flush();
        // Nothing carried to the next unit of work: native statements (the completion) would leave it stale.
        em.clear();
        return result;
    }
}
