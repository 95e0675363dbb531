package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.AtomicClaims;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The atomic claim: the claim row, the operation's work and its answer are written in one
 * transaction, whose owner a {@link HeldTransaction} names, and commit once. A duplicate's claim waits on the first
 * one's uncommitted row in the database; a duplicate on this node waits with no SQL and no connection.
 */
final class AtomicFlow implements ClaimFlow {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final dev.idempotency.spi.IdempotencyStore store;
    private final AtomicClaims atomicClaims;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final CompletionSignals signals;
    private final QuietCache cache;
    private final StoreCalls calls;
    private final Replies replies;
    private final TransactionKeys keys;
    private final Completions completions;
    private final LeasedFlow leased;
    private final Supplier<EngineObserver> observer;
    private final AtomicClaimLoop loop;

    AtomicFlow(dev.idempotency.spi.IdempotencyStore store, Clock clock, String nodeId, TransactionBridge transactions, CompletionSignals signals,
               QuietCache cache, StoreCalls calls, Replies replies, TransactionKeys keys, Completions completions,
               LeasedFlow leased, Supplier<EngineObserver> observer) {
        this.store = store;
        this.atomicClaims = store instanceof AtomicClaims a ? a : null;
        this.clock = clock;
        this.nodeId = nodeId;
        this.transactions = transactions;
        this.signals = signals;
        this.cache = cache;
        this.calls = calls;
        this.replies = replies;
        this.keys = keys;
        this.completions = completions;
        this.leased = leased;
        this.observer = observer;
        this.loop = new AtomicClaimLoop(signals, cache, replies, keys, completions, () -> {
            if (atomicClaims == null) {
                throw new IllegalStateException(store.getClass().getName() + " cannot claim inside a transaction");
            }
        });
    }

    /**
     * The atomic claim: the claim row, the operation's transactional work and the stored
     * result are written in one transaction, the caller's or one begun around the call, and commit once.
     *
     * <ul>
     * <li>A finished record in the cache or the store is replayed (or a different request rejected); the
     *     operation does not run.</li>
     * <li>A claim of the key held by another transaction: the claim statement waits for it at most
     *     {@link Policy#claimLockTimeout()}, and replays when it commits, or claims when it rolls back. A
     *     claim held by this node is seen without SQL. Then {@code REJECT} answers
     *     {@link IdempotencyInProgressException}; {@code WAIT} lets go of its transaction (and connection) and
     *     waits for a wake-up, up to the wait timeout. Inside the caller's transaction, which cannot be retried,
     *     a claim the database made wait is answered as in progress.</li>
     * <li>The operation throws: its transaction rolls back (the library's), or the claim row is removed from
     *     it (the caller's, which may still commit); a failure to keep is stored afterwards in a transaction of
     *     its own.</li>
     * </ul>
     *
     * @throws IdempotencyKeyReusedException  the key belongs to another request
     * @throws IdempotencyInProgressException another call holds the key
     * @throws IdempotencyStoreException      the store failed; the operation did not run, or, in the library's transaction,
     *                                        its commit lost the database's connection (it may have taken place)
     * @throws Exception                      what the operation threw
     */
    @Override
    public <R> AtomicOutcome<R> run(ScopedKey key, String fingerprint, String requestType, Policy policy, AtomicCall<R> call)
            throws Exception {
        return runAtomic(key, fingerprint, requestType, policy, call);
    }

    @Override
    public Decision hold(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        return beginAtomic(key, fingerprint, requestType, policy);
    }

    @Override
    public boolean workCommitsWithAnswer() {
        return true;
    }

    <R> AtomicOutcome<R> runAtomic(ScopedKey key, String fingerprint, String requestType, Policy policy,
                                          AtomicCall<R> call) throws Exception {
        transactions.checkNotEnded();
        boolean joined = transactions.isActive();
        return loop.run(key, fingerprint, policy, joined, AtomicOutcome.Replayed::new, (lockWait, started, mine) -> {
            HeldTransaction held = joined ? HeldTransaction.CALLERS : HeldTransaction.AROUND_THE_CALL;
            java.util.concurrent.atomic.AtomicReference<AtomicHold> claimed = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.Callable<AtomicClaimLoop.Step<AtomicOutcome<R>>> attempt = () -> {
                AtomicClaimLoop.Step<AtomicOutcome<R>> step = claimStep(key, fingerprint, requestType, policy, lockWait, started, mine, held);
                if (!(step instanceof AtomicClaimLoop.Step.Claimed<AtomicOutcome<R>> c)) {
                    return step;
                }
                claimed.set(c.hold());
                return new AtomicClaimLoop.Step.Done<>(new AtomicOutcome.Ran<>(runHeld(c.hold(), call)));
            };
            if (joined) {
                return attempt.call();
            }
            java.util.concurrent.atomic.AtomicReference<AtomicClaimLoop.Step<AtomicOutcome<R>>> returned =
                    new java.util.concurrent.atomic.AtomicReference<>();
            try {
                return transactions.required(() -> {
                    AtomicClaimLoop.Step<AtomicOutcome<R>> step = attempt.call();
                    returned.set(step);
                    return step;
                });
            } catch (Exception | Error e) {
                AtomicHold hold = claimed.get();
                if (hold != null && hold.keptFailureNotStored()) {
                    // never handed over unless stored: the key's answer instead, or the store's failure when not known
                    return new AtomicClaimLoop.Step.Replayed<>(
                            replies.failureLost(key, hold.failureDecided.get(), fingerprint, started, clock, e).record());
                }
                if (e instanceof Error error) {
                    throw error;
                }
                return afterLostCommit(key, (Exception) e, returned.get());
            }
        });
    }

    /**
     * The library's transaction failed. When it lost to another transaction's commit (on a multi-primary database, a
     * certification failure: another node committed the same key first) and the key now has a record, the claim is
     * judged again in a new transaction (a replay, or "in progress"); the operation's work rolled back with it. A
     * commit whose database connection failed (the server gone, or failing over) is the store's failure
     * ({@link LostConnection#atCommit}). Otherwise the failure is the caller's.
     *
     * @param returned what the transaction's work answered, when it returned (the failure is then the commit's); {@code null}
     *                 when the work threw
     */
    private <T> AtomicClaimLoop.Step<T> afterLostCommit(ScopedKey key, Exception failure, AtomicClaimLoop.Step<T> returned) throws Exception {
        if (!lostTheKey(key, failure)) {
            AtomicClaimLoop.Step<T> inHand = LostConnection.afterCommit(key, failure, returned, observer.get());
            if (inHand != null) {
                return inHand;
            }
            throw failure; // not a lost race for the key (a conflict on the operation's own rows, or the store cannot tell)
        }
        return new AtomicClaimLoop.Step.Blocked<>(true, Replies.MIN_RETRY_AFTER); // judged again: a replay of the winner, or "in progress"
    }

    /**
     * The atomic claim for a door whose work spans more than one call (HTTP: the resource method, then the
     * writing of its response): claims as {@link #runAtomic} does, in the caller's active transaction or in one
     * begun on this thread ({@link TransactionBridge#begin()}) and left open, and answers
     * {@link Decision.Held}: the door runs the operation, then calls {@link #completeAtomic} or
     * {@link #abortAtomic} on the same thread. A finished record is answered with {@link Decision.Replay}.
     *
     * @throws IdempotencyKeyReusedException  the key belongs to another request
     * @throws IdempotencyInProgressException another call holds the key
     * @throws IdempotencyStoreException      the store failed; nothing is held
     */
    Decision beginAtomic(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        transactions.checkNotEnded();
        boolean joined = transactions.isActive();
        try {
            return loop.run(key, fingerprint, policy, joined, Decision.Replay::new, (lockWait, started, mine) -> {
                HeldTransaction held = joined ? HeldTransaction.CALLERS : new HeldTransaction.OnRequestThread(transactions.begin());
                AtomicClaimLoop.Step<Decision> step;
                try {
                    step = claimStep(key, fingerprint, requestType, policy, lockWait, started, mine, held);
                } catch (RuntimeException | Error e) {
                    if (held.commitsHere()) {
                        held.abort(null, heldActions);
                    }
                    throw e;
                }
                if (step instanceof AtomicClaimLoop.Step.Claimed<Decision> claimed) {
                    return new AtomicClaimLoop.Step.Done<>(new Decision.Held(claimed.hold()));
                }
                if (held.commitsHere()) {
                    // Nothing of this attempt is to be kept: a read, or a statement that broke the transaction.
                    held.abort(null, heldActions);
                }
                return step;
            });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IdempotencyStoreException("Could not claim the " + key, e);
        }
    }

    /**
     * Completes a held atomic claim with its response, in its transaction, and commits that transaction when
     * the engine began it. When the transaction is marked for rollback, nothing is stored and it rolls back.
     *
     * @return whether the response is now stored (committed, or written into the caller's transaction)
     * @throws IdempotencyInProgressException the commit lost to another transaction that committed the key first (a
     *                                        multi-primary database, whose nodes certify commits): this work rolled
     *                                        back, a retry replays the other's
     * @throws IdempotencyStoreException the completion or the commit failed: nothing about the call is kept
     */
    boolean completeAtomic(AtomicHold hold, byte[] response) {
        Ticket ticket = hold.ticket();
        if (transactions.isRollbackOnly()) {
            LOG.log(Level.FINE, "{0} ran, but its transaction is marked for rollback: nothing is remembered", ticket.scopedKey());
            abortAtomic(hold);
            return false;
        }
        try {
            writeAnswer(hold, response);
        } catch (RuntimeException e) {
            abortAtomic(hold);
            throw hold.transaction.commitsHere() && lostTheKey(ticket.scopedKey(), e) ? lostToAnother(ticket.scopedKey()) : e;
        }
        if (hold.transaction.commitsHere()) {
            try {
                hold.transaction.commit();
            } catch (RuntimeException e) {
                if (lostTheKey(ticket.scopedKey(), e)) {
                    throw lostToAnother(ticket.scopedKey());
                }
                observer.get().storeError(ticket.scopedKey().namespace(), e);
                throw new IdempotencyStoreException("Could not commit the work and the response of the " + ticket.scopedKey(), e);
            }
        }
        return true;
    }

    /**
     * Whether this node's transaction for the key, rolled back now, lost to another transaction that committed the
     * key first (a multi-primary database: the other node's commit was certified first, and this one was aborted).
     */
    private boolean lostTheKey(ScopedKey key, Exception failure) {
        if (!atomicClaims.lostToAnotherCommit(failure)) {
            return false;
        }
        try {
            if (store.find(key).isEmpty()) {
                return false;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not read the " + key + " after a lost commit", e);
            return false;
        }
        LOG.log(Level.FINE, "{0}: another transaction committed the key first ({1})", new Object[] {key, failure});
        return true;
    }

    /** {@link #lostTheKey}, told as a conflict: the caller is answered "in progress". */
    private IdempotencyInProgressException lostToAnother(ScopedKey key) {
        observer.get().conflict(key);
        return replies.rejected(key, Replies.MIN_RETRY_AFTER);
    }

    /** Gives a held atomic claim up: its transaction rolls back (the engine's), or its claim row goes (the caller's). */
    void abortAtomic(AtomicHold hold) {
        if (hold.transaction instanceof HeldTransaction.Callers && !transactions.isActive()) {
            // The caller's transaction ended before the door settled the claim (a request whose response never reached
            // the library, settled when the request ended): whatever it did to the claim and the work is done; deleting
            // the claim now could free the key of work that committed.
            LOG.log(transactions.isRollbackOnly() ? Level.FINE : Level.WARNING,
                    "The transaction that holds the claim of the {0} ended before the claim was settled;"
                    + " it is left as that transaction left it", hold.ticket().scopedKey());
            return;
        }
        hold.transaction.abort(hold.ticket(), heldActions);
    }

    /** What a held transaction may do to its claim and to the thread's transaction. */
    private final HeldTransaction.Actions heldActions = new HeldTransaction.Actions() {
        @Override
        public void unclaim(Ticket ticket) {
            AtomicFlow.this.unclaim(ticket);
        }

        @Override
        public void setRollbackOnly() {
            transactions.setRollbackOnly();
        }
    };

    /** The claim, inside a transaction: claimed (held until that transaction ends), replayed, or blocked. */
    private <T> AtomicClaimLoop.Step<T> claimStep(ScopedKey key, String fingerprint, String requestType, Policy policy, Duration lockWait,
                                  long started, AtomicClaimLoop.LocalClaim mine, HeldTransaction held) {
        Instant now = clock.instant();
        long claimStarted = System.nanoTime();
        Claim claim = claimAtomically(new ClaimRequest(key, fingerprint, requestType, nodeId, now,
                now.plus(policy.lease()), now.plus(policy.ttl())), lockWait);
        if (claim instanceof Claim.Busy busy) {
            transactions.setRollbackOnly(); // the failed statement may have broken the transaction (PostgreSQL)
            return new AtomicClaimLoop.Step.Blocked<>(busy.settled(), Replies.MIN_RETRY_AFTER);
        }
        if (claim instanceof Claim.Existing existing) {
            IdempotencyRecord record = existing.record();
            if (record.isFinished()) {
                cache.putLoaded(record, now);
                return new AtomicClaimLoop.Step.Replayed<>(replies.replay(key, record, fingerprint, started, false).record());
            }
            if (!record.fingerprint().equals(fingerprint)) {
                throw replies.reused(key);
            }
            // A leased claim in progress (a method that asks for leased claims shares this key).
            return new AtomicClaimLoop.Step.Blocked<>(false, Replies.retryAfter(Duration.between(now, record.leaseUntil())));
        }
        Ticket ticket = ((Claim.Acquired) claim).ticket();
        observer.get().executed(key, Duration.ofNanos(System.nanoTime() - claimStarted), ticket.takeover());
        LOG.log(Level.FINE, "Claimed {0} in the transaction", key);
        AtomicHold hold = new AtomicHold(ticket, held, this);
        String id = key.cacheId();
        keys.remember(key);
        transactions.afterCompletion(committed -> {
            // A failure to keep is stored before this node's duplicates are let go or woken: they find it instead of
            // running. A duplicate on another node that waited for the key's row takes it in the moment between the
            // rollback and this write, and its answer is the key's: the failure is not kept (a warning says so), and
            // in the library's own transaction the caller gets that answer (runAtomic).
            try {
                byte[] failure = hold.keptFailure.get();
                if (failure != null) {
                    hold.failureDecided.set(leased.keepFailureAfterwards(key, fingerprint, requestType, policy, failure));
                }
            } finally {
                loop.forget(id, mine);
                IdempotencyRecord record = hold.completed.get();
                if (committed && record != null) {
                    completions.finished(record);
                } else {
                    completions.changed(key);
                }
            }
        });
        mine.acquired = true;
        return new AtomicClaimLoop.Step.Claimed<>(hold);
    }

    /** Runs the operation under a held claim and writes its result into the transaction. */
    private <R> R runHeld(AtomicHold hold, AtomicCall<R> call) throws Exception {
        Ticket ticket = hold.ticket();
        R value;
        try {
            value = call.run();
        } catch (Throwable t) {
            if (call.keeps(t)) {
                hold.keptFailure.set(call.failure(t));
            }
            // The caller's transaction may still commit (a checked exception it catches): its claim row goes now.
            hold.transaction.undo(ticket, heldActions);
            throw sneaky(t);
        }
        if (transactions.isRollbackOnly()) {
            LOG.log(Level.FINE, "{0} ran, but its transaction is marked for rollback: nothing is remembered", ticket.scopedKey());
            return value;
        }
        byte[] response;
        try {
            response = call.response(value);
        } catch (RuntimeException | Error e) {
            // The result cannot be stored: nothing about the call is kept (never a claim left to wait on).
            hold.transaction.undo(ticket, heldActions);
            throw e;
        }
        writeAnswer(hold, response);
        return value;
    }

    /** The answer written into the held claim's row, in its transaction; cached and signalled once that commits. */
    private void writeAnswer(AtomicHold hold, byte[] response) {
        Ticket ticket = hold.ticket();
        Instant end = clock.instant();
        calls.finish(ticket, new Completion(RecordStatus.COMPLETED, response, end, true), true);
        hold.completed.set(ticket.finished(RecordStatus.COMPLETED, response, end));
    }

    private Claim claimAtomically(ClaimRequest request, Duration lockWait) {
        return calls.claim(request, () -> atomicClaims.claimInTransaction(request, lockWait));
    }

    private void unclaim(Ticket ticket) {
        try {
            atomicClaims.unclaimInTransaction(ticket);
            keys.forget(ticket.scopedKey());
            observer.get().released(ticket.scopedKey());
        } catch (RuntimeException e) {
            observer.get().storeError(ticket.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "Could not undo the claim of " + ticket.scopedKey() + "; its transaction is marked for rollback", e);
            transactions.setRollbackOnly();
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
