package dev.idempotency.jta;

import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.util.function.IntConsumer;

/** A step run when the current JTA transaction completes, with its status, and nothing to do before. */
public final class AfterCompletion {

    private AfterCompletion() {
    }

    /**
     * Registers {@code step} (an interposed synchronization: after the resources completed) on the current transaction.
     *
     * @param step called with the transaction's {@code jakarta.transaction.Status} once it completed
     */
    public static void register(TransactionSynchronizationRegistry registry, IntConsumer step) {
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
                // nothing to do before: the resources complete the work themselves
            }

            @Override
            public void afterCompletion(int status) {
                step.accept(status);
            }
        });
    }
}
