package dev.idempotency.core;

import dev.idempotency.spi.Ticket;

/**
 * Whose transaction holds an atomic claim, and so what settling the claim does to that transaction. One variant per
 * owner, chosen when the key is claimed; nothing asks again which it is.
 *
 * <p>In every variant the claim, the work and the answer share the transaction's one connection: the store writes
 * through the connection enlisted in it and asks the pool for no other while it holds one.
 */
sealed interface HeldTransaction {

    /** What a variant may do to the claim and to the thread's transaction. */
    interface Actions {
        /** Deletes the claim's row inside the transaction, which may still commit. */
        void unclaim(Ticket ticket);

        /** Marks the thread's transaction so that it can only roll back. */
        void setRollbackOnly();
    }

    /** The caller's own transaction (a {@code @Transactional} caller, an EJB, a message delivery). */
    Callers CALLERS = new Callers();

    /** One the library begins around the call (REQUIRED) and ends when the call returns. */
    AroundTheCall AROUND_THE_CALL = new AroundTheCall();

    /**
     * The call's work failed, or its result cannot be kept, while the transaction goes on: nothing of the claim may be
     * committed with it.
     */
    void undo(Ticket ticket, Actions actions);

    /** The door gives the claim up (a status not kept, a writer that failed): nothing of the call is kept. */
    void abort(Ticket ticket, Actions actions);

    /** After the answer is written into the transaction: commits it when it is this door's to commit. */
    void commit();

    /** Whether {@link #commit()} commits (a failure there, a lost race included, is then the call's own). */
    boolean commitsHere();

    /** The caller commits or rolls back; undoing the claim deletes its row, so that a commit leaves the key free. */
    record Callers() implements HeldTransaction {
        @Override
        public void undo(Ticket ticket, Actions actions) {
            actions.unclaim(ticket);
        }

        @Override
        public void abort(Ticket ticket, Actions actions) {
            actions.unclaim(ticket);
        }

        @Override
        public void commit() {
            // the caller's to commit
        }

        @Override
        public boolean commitsHere() {
            return false;
        }
    }

    /** Committed by the library when the call returns, rolled back when it throws or the transaction was marked. */
    record AroundTheCall() implements HeldTransaction {
        @Override
        public void undo(Ticket ticket, Actions actions) {
            actions.setRollbackOnly();
        }

        @Override
        public void abort(Ticket ticket, Actions actions) {
            actions.setRollbackOnly();
        }

        @Override
        public void commit() {
            // committed when the call returns
        }

        @Override
        public boolean commitsHere() {
            return false;
        }
    }

    /** Begun on the request's thread and left open for the response: the settlement commits or rolls it back. */
    record OnRequestThread(TransactionBridge.Begun begun) implements HeldTransaction {
        @Override
        public void undo(Ticket ticket, Actions actions) {
            actions.setRollbackOnly();
        }

        @Override
        public void abort(Ticket ticket, Actions actions) {
            begun.rollback();
        }

        @Override
        public void commit() {
            begun.commit();
        }

        @Override
        public boolean commitsHere() {
            return true;
        }
    }
}
