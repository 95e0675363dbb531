package dev.idempotency.core;

import java.util.function.Consumer;

/**
 * The engine's view of the caller's transaction (JTA in a Jakarta EE server), without depending on it.
 */
public interface TransactionBridge {

    /** No transactions: every write commits on its own. */
    TransactionBridge NONE = new TransactionBridge() {
        @Override
        public boolean isActive() {
            return false;
        }

        @Override
        public boolean isRollbackOnly() {
            return false;
        }

        @Override
        public void afterCompletion(Consumer<Boolean> committed) {
            throw new IllegalStateException("no transaction");
        }

        @Override
        public void setRollbackOnly() {
            throw new IllegalStateException("no transaction");
        }
    };

    /** Whether the calling thread has a transaction that has not completed yet. */
    boolean isActive();

    /** Whether the active transaction is already marked so that it can only roll back. */
    boolean isRollbackOnly();

    /** Calls back once the active transaction has completed, with {@code true} when it committed. */
    void afterCompletion(Consumer<Boolean> committed);

    /** Marks the active transaction so that it can only roll back. */
    void setRollbackOnly();
}
