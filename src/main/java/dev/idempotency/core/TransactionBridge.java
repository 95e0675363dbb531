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

    /**
     * Whether the thread's transaction can only roll back: marked so, or already rolled back while still associated
     * with the thread (timed out).
     */
    boolean isRollbackOnly();

    /**
     * Refuses a call on a thread whose transaction has ended under it (timed out and rolled back by the manager): the
     * call would otherwise run outside it, in a new transaction or none, while its caller believes it inside.
     *
     * @throws IllegalStateException the thread's transaction has ended
     */
    default void checkNotEnded() {
        if (!isActive() && isRollbackOnly()) {
            throw new IllegalStateException("The caller's transaction has ended (rolled back, as at its timeout) while"
                    + " still associated with the thread: nothing runs outside it");
        }
    }

    /** Calls back once the active transaction has completed, with {@code true} when it committed. */
    void afterCompletion(Consumer<Boolean> committed);

    /** How a transaction ended, as far as the library can know. */
    enum Outcome {
        COMMITTED,
        ROLLED_BACK,
        /**
         * A commit that failed where it may have taken place (its connection lost during a one-phase commit): neither
         * committed nor rolled back as far as anyone here knows; the store, read again, decides.
         */
        UNKNOWN
    }

    /**
     * Calls back once the active transaction has completed, with its outcome: {@link Outcome#UNKNOWN} where the bridge
     * can tell a failed commit that may have taken place. By default {@link #afterCompletion}'s: committed or rolled back.
     */
    default void afterOutcome(Consumer<Outcome> step) {
        afterCompletion(committed -> step.accept(committed ? Outcome.COMMITTED : Outcome.ROLLED_BACK));
    }

    /** Marks the active transaction so that it can only roll back. */
    void setRollbackOnly();

    /**
     * The keys ({@link dev.idempotency.spi.ScopedKey#cacheId()}) claimed so far in the active transaction: a mutable
     * set that lives as long as that transaction, made when {@code create} and there is none yet; {@code null} when
     * there is no active transaction, none was made, or this bridge cannot tell. A second claim of one key inside
     * one transaction fails at once with it, instead of waiting on the transaction's own row lock.
     */
    default java.util.Set<String> claimsOfThisTransaction(boolean create) {
        return null;
    }

    /** A transaction {@link #begin()} started on the calling thread, to be ended on that thread. */
    interface Begun {
        /** Commits; a failure (the transaction rolled back instead) is thrown. */
        void commit();

        /** Rolls back, quietly. */
        void rollback();
    }

    /** Whether {@link #begin()} can start a transaction on the calling thread. */
    default boolean canBeginOnThread() {
        return false;
    }

    /** Starts a transaction on the calling thread, which has none, and leaves it open. */
    default Begun begin() {
        throw new IllegalStateException("no transaction manager to begin a transaction with");
    }

    /** Whether {@link #required} can begin a transaction when the caller has none. */
    default boolean canBegin() {
        return false;
    }

    /**
     * Runs the work in the caller's active transaction, or in a transaction begun around it when there is none
     * (REQUIRED): committed when the work returns, rolled back when it throws or marked the transaction for
     * rollback.
     */
    default <T> T required(java.util.concurrent.Callable<T> work) throws Exception {
        if (isActive()) {
            return work.call();
        }
        throw new IllegalStateException("no transaction manager to begin a transaction with");
    }
}
