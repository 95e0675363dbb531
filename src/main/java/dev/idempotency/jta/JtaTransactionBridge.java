package dev.idempotency.jta;

import dev.idempotency.core.TransactionBridge;
import dev.idempotency.core.TransactionBridge.Outcome;

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
        Object transaction = registry.getTransactionKey();
        return new Begun() {
            @Override
            public void commit() {
                OwnCommit own = OwnCommit.open(transaction);
                try {
                    if (ut.getStatus() == Status.STATUS_MARKED_ROLLBACK) {
                        ut.rollback();
                        throw new IllegalStateException("the transaction was marked for rollback");
                    }
                    ut.commit();
                    own.settle(Outcome.COMMITTED);
                } catch (RuntimeException e) {
                    own.settle(Outcome.UNKNOWN);
                    throw e;
                } catch (Exception e) {
                    own.settle(Outcome.UNKNOWN);
                    throw new IllegalStateException("Could not commit: " + e, e);
                } finally {
                    own.close();
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
        OwnCommit own = OwnCommit.open(null);
        try {
            T result = newTransactions.required(() -> {
                own.transaction = registry.getTransactionKey();
                return work.call();
            });
            own.settle(Outcome.COMMITTED);
            return result;
        } catch (Exception | Error e) {
            own.settle(Outcome.UNKNOWN);
            throw e;
        } finally {
            own.close();
        }
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
        afterOutcome(outcome -> committed.accept(outcome == Outcome.COMMITTED));
    }

    /**
     * Calls back once the transaction completed. For a transaction this bridge commits itself ({@link #begin()},
     * {@link #required}), {@link Outcome#COMMITTED} is told only once its commit returned, and {@link Outcome#UNKNOWN}
     * when it threw after the manager had reported it committed: a transaction manager may report a commit whose
     * outcome it could not learn as committed (Narayana calls synchronizations with {@code STATUS_COMMITTED} after a
     * one-phase commit whose connection failed, and then throws {@code HeuristicMixedException}), and an answer
     * published then (cached, handed to waiting duplicates) could be one the database never kept. In a transaction of
     * the caller's the manager's word is all there is.
     */
    @Override
    public void afterOutcome(Consumer<Outcome> step) {
        // nothing to flush before: the completion was written when the operation returned
        Object transaction = registry.getTransactionKey();
        AfterCompletion.register(registry, status -> {
            OwnCommit own = OwnCommit.committing(transaction);
            if (status == Status.STATUS_COMMITTED && own != null) {
                own.waiting.add(step); // told when its commit returns, or fails
            } else {
                step.accept(status == Status.STATUS_COMMITTED ? Outcome.COMMITTED : Outcome.ROLLED_BACK);
            }
        });
    }

    /**
     * A commit of this bridge's own transaction under way on this thread, and the completion steps that wait for its
     * outcome. One per thread at a time, with the one it interrupted (a step run after a commit may begin another).
     */
    private static final class OwnCommit {
        private static final ThreadLocal<OwnCommit> CURRENT = new ThreadLocal<>();

        private final OwnCommit outer;
        /** The transaction's key ({@link TransactionSynchronizationRegistry#getTransactionKey()}), once begun. */
        private volatile Object transaction;
        private final java.util.List<Consumer<Outcome>> waiting = new java.util.ArrayList<>();

        private OwnCommit(OwnCommit outer, Object transaction) {
            this.outer = outer;
            this.transaction = transaction;
        }

        static OwnCommit open(Object transaction) {
            OwnCommit own = new OwnCommit(CURRENT.get(), transaction);
            CURRENT.set(own);
            return own;
        }

        /** The commit of {@code transaction} under way on this thread, if this bridge is making it. */
        static OwnCommit committing(Object transaction) {
            OwnCommit own = CURRENT.get();
            return own != null && transaction != null && transaction.equals(own.transaction) ? own : null;
        }

        /**
         * Tells the waiting steps the commit's outcome, each once, every one of them even when one fails: a step's
         * exception is logged; an error is thrown once all have run.
         */
        void settle(Outcome outcome) {
            java.util.List<Consumer<Outcome>> steps = new java.util.ArrayList<>(waiting);
            waiting.clear();
            Error error = null;
            for (Consumer<Outcome> step : steps) {
                try {
                    step.accept(outcome);
                } catch (RuntimeException e) {
                    java.util.logging.Logger.getLogger(JtaTransactionBridge.class.getName())
                            .log(java.util.logging.Level.WARNING, "A step after the transaction's completion failed", e);
                } catch (Error e) {
                    if (error == null) {
                        error = e;
                    } else {
                        error.addSuppressed(e);
                    }
                }
            }
            if (error != null) {
                throw error;
            }
        }

        void close() {
            settle(Outcome.UNKNOWN); // none left, unless the commit neither returned nor threw through this bridge
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
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
