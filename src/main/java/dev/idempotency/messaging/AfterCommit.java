package dev.idempotency.messaging;

import dev.idempotency.jta.AfterCompletion;

import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;

import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** The JTA part, apart: loaded only where there is a transaction manager. */
final class AfterCommit {

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(AfterCommit.class.getName());

    private AfterCommit() {
    }

    /** Marks the current transaction, if one is active, for rollback. */
    static void markRollbackOnly(Object registryObject) {
        TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
        if (registry.getTransactionKey() != null && registry.getTransactionStatus() == Status.STATUS_ACTIVE) {
            registry.setRollbackOnly();
        }
    }

    static Object transactionKey(Object registryObject) {
        return ((TransactionSynchronizationRegistry) registryObject).getTransactionKey();
    }

    public static void enlist(Object registryObject, Settlement call) {
        TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
        Object key = registry.getTransactionKey();
        if (key == null) {
            return;
        }
        int attempt = call.transactionBegun(key);
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            call.transactionEnded(attempt, Status.STATUS_ROLLEDBACK); // marked for rollback already: it cannot commit
            return;
        }
        AfterCompletion.register(registry, status -> {
            try {
                call.transactionEnded(attempt, status);
            } catch (RuntimeException e) {
                LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
            }
        });
    }

    /**
     * An acknowledgement asked for inside the current transaction, which is not the call's: once it commits, the
     * acknowledgement is the call's (it waits for the call's own transaction); should it roll back, the call's work did
     * not all happen ({@link Settlement#nestedRolledBack}).
     */
    static void whenNestedEnds(Object registryObject, Settlement call, Message<?> message, int ofAttempt) {
        TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            call.nestedRolledBack(message, ofAttempt); // marked for rollback already: it cannot commit
            return;
        }
        AfterCompletion.register(registry, status -> {
            try {
                if (status == Status.STATUS_COMMITTED) {
                    call.nestedCommitted(message, ofAttempt);
                } else {
                    call.nestedRolledBack(message, ofAttempt);
                }
            } catch (RuntimeException e) {
                LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
            }
        });
    }

    /**
     * Settles the record once the current transaction ends (at once outside one); the stage returned is complete at
     * once: a transaction interceptor that ends the transaction only once the method's stage completes would
     * otherwise wait for an acknowledgement that waits for it.
     */
    public static CompletionStage<Void> settle(Message<?> message, Object registryObject, Throwable failure,
                                        Settlement returned) {
        TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
        if (registry.getTransactionKey() == null) {
            return returned.once(message, failure);
        }
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            // Marked for rollback (or ending): it cannot commit, and takes no synchronization.
            if (failure == null && !returned.hasReturned()) {
                returned.rollBack();
                return CompletableFuture.completedFuture(null);
            }
            return returned.once(message, failure == null ? Settlement.rolledBackFailure() : failure);
        }
        AfterCompletion.register(registry, status -> {
            if (failure == null && status != Status.STATUS_COMMITTED && !returned.hasReturned()) {
                returned.rollBack(); // rolled back inside the call: the library settles the record itself
                return;
            }
            try {
                CompletionStage<Void> settled = returned.once(message, failure != null ? failure
                        : status == Status.STATUS_COMMITTED ? null : Settlement.rolledBackFailure());
                settled.whenComplete((v, e) -> {
                    if (e != null) {
                        LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
                    }
                });
            } catch (RuntimeException e) {
                LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
            }
        });
        return CompletableFuture.completedFuture(null);
    }
}
