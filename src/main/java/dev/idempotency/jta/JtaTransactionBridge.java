package dev.idempotency.jta;

import dev.idempotency.core.TransactionBridge;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.util.function.Consumer;

/** The engine's {@link TransactionBridge} over a JTA {@link TransactionSynchronizationRegistry}. */
public final class JtaTransactionBridge implements TransactionBridge {

    private final TransactionSynchronizationRegistry registry;

    public JtaTransactionBridge(TransactionSynchronizationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public boolean isActive() {
        int status = registry.getTransactionStatus();
        return status == Status.STATUS_ACTIVE || status == Status.STATUS_MARKED_ROLLBACK;
    }

    @Override
    public boolean isRollbackOnly() {
        return registry.getTransactionStatus() == Status.STATUS_MARKED_ROLLBACK;
    }

    @Override
    public void afterCompletion(Consumer<Boolean> committed) {
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
                // nothing to flush: the completion was written when the operation returned
            }

            @Override
            public void afterCompletion(int status) {
                committed.accept(status == Status.STATUS_COMMITTED);
            }
        });
    }

    @Override
    public void setRollbackOnly() {
        registry.setRollbackOnly();
    }
}
