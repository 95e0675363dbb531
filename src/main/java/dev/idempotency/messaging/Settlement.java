package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;

import jakarta.transaction.Status;

import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where a call's record stands between the method and the library, one state for all threads: the attempt that runs,
 * the transaction its work runs in and how that ended, whether the call returned, the first acknowledgement or
 * refusal the method asked for, and whether the record was answered. The record is answered once: when the
 * transaction committed (an acknowledgement) or rolled back after the call returned (a refusal), when the call
 * returned if there is no transaction, at once for a refusal asked for after the return. A transaction that rolls
 * back before the call returned leaves the record to the library; a refusal asked for while the call runs is the
 * call's failure.
 */
final class Settlement {
    private final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();
    // guarded by this
    private int attempt;
    private boolean returned;
    private boolean rolledBack;
    /** A transaction of the call's other than its own, in which the method acknowledged its record, rolled back. */
    private boolean nestedRollback;
    /** The method returned and the library read {@link #nestedRollback} for this attempt: too late to fail the call. */
    private boolean workEnded;
    private Throwable nacked;
    private Message<?> nackedMessage;
    private Object transaction;
    private Integer ended;
    private Message<?> requested;
    private Throwable requestedFailure;

    /**
     * Acknowledges the record (or nacks it, with {@code failure}) unless it was settled already: a record is answered
     * once, by the first acknowledgement or refusal.
     */
    CompletionStage<Void> once(Message<?> message, Throwable failure) {
        if (!settled.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        return failure == null ? message.ack() : message.nack(failure);
    }

    /**
     * The method runs (again): what an earlier run of the same call asked for is gone with that run's transaction
     * (a claim that runs the work again after its first transaction rolled back, as an optimistic one may).
     */
    synchronized void attempt() {
        attempt++;
        rolledBack = false;
        nestedRollback = false;
        workEnded = false;
        nacked = null;
        nackedMessage = null;
        transaction = null;
        ended = null;
        requested = null;
        requestedFailure = null;
    }

    /** The call's work runs in this transaction; returns the attempt its end is to be reported for. */
    synchronized int transactionBegun(Object key) {
        transaction = key;
        return attempt;
    }

    /** The transaction of an attempt ended with {@code status} (a jakarta.transaction.Status). */
    void transactionEnded(int ofAttempt, int status) {
        Runnable answer;
        synchronized (this) {
            if (ofAttempt != attempt) {
                return; // an earlier attempt's
            }
            ended = status;
            answer = decide();
        }
        answer.run();
    }

    /** The call returned normally: from now on a rollback refuses the record. */
    void returned() {
        Runnable answer;
        synchronized (this) {
            returned = true;
            answer = decide();
        }
        answer.run();
    }

    synchronized boolean hasReturned() {
        return returned;
    }

    /**
     * An acknowledgement (or, with {@code failure}, a refusal) asked for by the method, on whichever thread. An
     * acknowledgement asked for inside another transaction than the call's (a bean's {@code REQUIRES_NEW}, or a bean's
     * own where the call has none) counts once that transaction commits, and then waits for the call's as any other:
     * should that transaction roll back, the call's work did not all happen, and the call fails ({@link #nestedRolledBack}).
     * A refusal, in whichever transaction, is the call's failure while the call runs.
     */
    CompletionStage<Void> asked(Message<?> message, Object registry, Throwable failure) {
        Object current = registry == null ? null : AfterCommit.transactionKey(registry);
        Runnable answer;
        int ofAttempt;
        synchronized (this) {
            ofAttempt = attempt;
            if (failure == null && current != null && !current.equals(transaction)) {
                answer = null;
            } else if (failure != null && !returned) {
                if (nacked == null) {
                    nacked = failure; // the call's failure: the library refuses the record
                    nackedMessage = message;
                }
                answer = decide();
            } else {
                if (failure == null) {
                    nestedRollback = false; // the method's own acknowledgement, after a bean's rolled back: the method decided
                }
                if (requested == null) {
                    requested = message; // the first one counts
                    requestedFailure = failure;
                }
                answer = decide();
            }
        }
        if (answer == null) {
            AfterCommit.whenNestedEnds(registry, this, message, ofAttempt);
            return CompletableFuture.completedFuture(null);
        }
        answer.run();
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The transaction in which the method acknowledged its record, another than the call's, rolled back: part of the
     * call's work did not happen. While the call runs, the call fails with it (its work and its claim roll back, and the
     * record is refused, so that it comes again); once it returned, the record is refused.
     */
    void nestedRolledBack(Message<?> message, int ofAttempt) {
        boolean late;
        synchronized (this) {
            if (ofAttempt != attempt) {
                return; // an earlier attempt's, whose work is gone with its own transaction
            }
            // Once the library has read whether the call's work all happened (the call's outcome is being stored), the
            // rollback can only refuse the record, as after the return: a flag set now would be read by no one.
            late = returned || workEnded;
            if (!late) {
                nestedRollback = true;
            }
        }
        if (late) {
            once(message, rolledBackFailure());
        }
    }

    /**
     * The transaction in which the method acknowledged its record, another than the call's, committed: the
     * acknowledgement is the call's now, and waits for the call's own transaction (or its return, outside one).
     */
    void nestedCommitted(Message<?> message, int ofAttempt) {
        Runnable answer;
        synchronized (this) {
            if (ofAttempt != attempt) {
                return;
            }
            if (requested == null) {
                requested = message;
                requestedFailure = null;
            }
            answer = decide();
        }
        answer.run();
    }

    /**
     * The method returned: whether a transaction of the call other than its own, in which the method acknowledged its
     * record, rolled back while the call ran, and the method did not acknowledge the record again in its own since. One
     * that rolls back from now on refuses the record itself.
     */
    synchronized boolean workEnded() {
        workEnded = true;
        return nestedRollback;
    }

    /** What to do now, if anything; the request it answers is consumed. */
    private Runnable decide() {
        if (returned && nackedMessage != null) {
            // refused while the call ran, too late to fail it: the refusal counts
            Message<?> m = nackedMessage;
            Throwable f = nacked;
            nackedMessage = null;
            requested = null;
            return () -> once(m, f);
        }
        if (requested == null) {
            return () -> { };
        }
        Message<?> m = requested;
        Throwable f = requestedFailure;
        if (f == null && transaction != null && ended == null) {
            return () -> { }; // waits for the transaction
        }
        if (f == null && transaction == null && !returned) {
            return () -> { }; // no transaction: waits for the call to return
        }
        requested = null;
        if (f != null) {
            return () -> once(m, f);
        }
        if (transaction == null || ended == Status.STATUS_COMMITTED) {
            return () -> once(m, null);
        }
        if (!returned) {
            rolledBack = true; // rolled back inside the call: the library settles the record itself
            return () -> { };
        }
        return () -> once(m, rolledBackFailure());
    }

    /** Whether the method acknowledged the record in a transaction that then rolled back, before the call returned. */
    synchronized boolean rolledBack() {
        return rolledBack;
    }

    synchronized void rollBack() {
        rolledBack = true;
    }

    /** The reason the method refused its record with, while the call ran; {@code null} if it did not. */
    synchronized Throwable nacked() {
        return nacked;
    }

    /** Why a record acknowledged in a transaction that rolled back is refused. */
    static IdempotencyException rolledBackFailure() {
        return new NotDone();
    }

    /**
     * The call's work did not all happen (a transaction in which the record was acknowledged rolled back): never kept as
     * the call's outcome, whatever {@code keepOn} says, so that the record's redelivery runs.
     */
    static final class NotDone extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        NotDone() {
            super("The transaction that handled the record rolled back after the record was acknowledged in it; it is"
                    + " refused instead, so that it comes again");
        }
    }
}
