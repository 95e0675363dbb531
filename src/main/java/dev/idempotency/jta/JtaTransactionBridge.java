package dev.idempotency.jta;

import dev.idempotency.core.TransactionBridge;

import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.util.function.Consumer;

/** The engine's {@link TransactionBridge} over a JTA {@link TransactionSynchronizationRegistry}. */
public final class JtaTransactionBridge implements TransactionBridge {

    private final TransactionSynchronizationRegistry registry;
    private final NewTransactions newTransactions;
    private final jakarta.transaction.UserTransaction userTransaction;

    /** A bridge that joins transactions but cannot begin one (no atomic claims without a caller's transaction). */
    public JtaTransactionBridge(TransactionSynchronizationRegistry registry) {
        this(registry, null, null);
    }

    /** @param newTransactions begins a transaction when the caller has none, or {@code null} */
    public JtaTransactionBridge(TransactionSynchronizationRegistry registry, NewTransactions newTransactions) {
        this(registry, newTransactions, null);
    }

    /**
     * @param newTransactions begins a transaction around work when the caller has none, or {@code null}
     * @param userTransaction begins a transaction on the calling thread and leaves it open, or {@code null}
     */
    public JtaTransactionBridge(TransactionSynchronizationRegistry registry, NewTransactions newTransactions,
                                jakarta.transaction.UserTransaction userTransaction) {
        this.registry = registry;
        this.newTransactions = newTransactions;
        this.userTransaction = userTransaction;
    }

    @Override
    public boolean canBeginOnThread() {
        return userTransaction != null;
    }

    @Override
    public Begun begin() {
        if (userTransaction == null) {
            throw new IllegalStateException("no UserTransaction to begin a transaction with");
        }
        try {
            userTransaction.begin();
        } catch (Exception e) {
            throw new IllegalStateException("Could not begin a transaction: " + e, e);
        }
        jakarta.transaction.UserTransaction ut = userTransaction;
        return new Begun() {
            @Override
            public void commit() {
                try {
                    if (ut.getStatus() == Status.STATUS_MARKED_ROLLBACK) {
                        ut.rollback();
                        throw new IllegalStateException("the transaction was marked for rollback");
                    }
                    ut.commit();
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("Could not commit: " + e, e);
                }
            }

            @Override
            public void rollback() {
                try {
                    if (ut.getStatus() != Status.STATUS_NO_TRANSACTION) {
                        ut.rollback();
                    }
                } catch (Exception e) {
                    java.util.logging.Logger.getLogger(JtaTransactionBridge.class.getName())
                            .log(java.util.logging.Level.WARNING, "Could not roll back", e);
                }
            }
        };
    }

    @Override
    public boolean canBegin() {
        return newTransactions != null;
    }

    @Override
    public <T> T required(java.util.concurrent.Callable<T> work) throws Exception {
        if (isActive()) {
            return work.call();
        }
        if (newTransactions == null) {
            throw new IllegalStateException("no transaction manager to begin a transaction with");
        }
        return newTransactions.required(work);
    }

    @Override
    public boolean isActive() {
        int status = registry.getTransactionStatus();
        return status == Status.STATUS_ACTIVE || status == Status.STATUS_MARKED_ROLLBACK;
    }

    /**
     * Marked for rollback, or already rolled back (or rolling back) while still this thread's: a transaction the
     * manager's reaper ended at its timeout while the call ran. Either can only roll back; nothing of the call may be
     * kept, and no statement may quietly run outside it.
     */
    @Override
    public boolean isRollbackOnly() {
        int status = registry.getTransactionStatus();
        return status == Status.STATUS_MARKED_ROLLBACK || status == Status.STATUS_ROLLEDBACK
                || status == Status.STATUS_ROLLING_BACK;
    }

    @Override
    public void afterCompletion(Consumer<Boolean> committed) {
        // nothing to flush before: the completion was written when the operation returned
        AfterCompletion.register(registry, status -> committed.accept(status == Status.STATUS_COMMITTED));
    }

    /** Where {@link #claimsOfThisTransaction(boolean)} keeps its set, in the transaction's resources. */
    private static final Object CLAIMS = JtaTransactionBridge.class.getName() + ".claims";

    @Override
    @SuppressWarnings("unchecked")
    public java.util.Set<String> claimsOfThisTransaction(boolean create) {
        if (!isActive()) {
            return null;
        }
        java.util.Set<String> claims = (java.util.Set<String>) registry.getResource(CLAIMS);
        if (claims == null && create) {
            claims = new java.util.HashSet<>();
            registry.putResource(CLAIMS, claims);
        }
        return claims;
    }

    @Override
    public void setRollbackOnly() {
        registry.setRollbackOnly();
    }
}
