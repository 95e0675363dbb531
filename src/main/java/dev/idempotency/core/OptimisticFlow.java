package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.AtomicClaims;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The optimistic claim: nothing is written before the work runs; when it has run, one insert of the finished record, in
 * the work's transaction, commits with it. Concurrent duplicates are held off before they run by a marker: this node's
 * (the claim loop's, with no SQL) and, across nodes, the shared cache's ({@link QuietCache#mark}). The store's unique
 * key stays the judge: when two calls ran anyway (markers that cannot see each other), the second insert finds the
 * first's row, and its transaction, its work with it, rolls back; its caller gets the first's answer.
 *
 * <p>Over 400 lines on purpose: one claim mode's state machine (the marker, the run, the insert, the loser's rollback
 * and answer) is read as one, as the other flows are.
 */
final class OptimisticFlow implements ClaimFlow {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final IdempotencyStore store;
    private final AtomicClaims claims;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final QuietCache cache;
    private final StoreCalls calls;
    private final Replies replies;
    private final TransactionKeys keys;
    private final Completions completions;
    private final LeasedFlow leased;
    private final Supplier<EngineObserver> observer;
    private final AtomicClaimLoop loop;
    private final CompletionSignals signals;
    /** The start of each call's marker holder: this node and this engine's start (a node restarted counts afresh). */
    private final String holderPrefix;
    private final java.util.concurrent.atomic.AtomicLong runs = new java.util.concurrent.atomic.AtomicLong();

    OptimisticFlow(IdempotencyStore store, Clock clock, String nodeId, TransactionBridge transactions, CompletionSignals signals,
                   QuietCache cache, StoreCalls calls, Replies replies, TransactionKeys keys, Completions completions,
                   LeasedFlow leased, Supplier<EngineObserver> observer) {
        this.store = store;
        this.claims = store instanceof AtomicClaims a ? a : null;
        this.clock = clock;
        this.nodeId = nodeId;
        this.transactions = transactions;
        this.cache = cache;
        this.calls = calls;
        this.replies = replies;
        this.keys = keys;
        this.completions = completions;
        this.leased = leased;
        this.observer = observer;
        this.holderPrefix = nodeId + "/" + UUID.randomUUID() + "/";
        this.signals = signals;
        this.loop = new AtomicClaimLoop(signals, cache, replies, keys, completions, () -> {
            if (claims == null) {
                throw new IllegalStateException(store.getClass().getName() + " cannot claim inside a transaction");
            }
        });
    }

    /**
     * Runs the call in the caller's transaction, or in one begun around it, and writes its finished record there.
     *
     * <ul>
     * <li>A finished record in the cache, else in the store (read before the work runs), is replayed; the call does not
     *     run.</li>
     * <li>Another call of the key runs (its marker, on this node or another): {@code REJECT} answers
     *     {@link IdempotencyInProgressException}; {@code WAIT} waits for its answer, holding no transaction or connection
     *     of its own, up to the wait timeout.</li>
     * <li>The record's insert finds another call's row of the key: this transaction rolls back, and the call is judged
     *     again (the other's answer, or in progress); inside the caller's transaction, which cannot be retried, the
     *     caller is answered "in progress" and its transaction is marked for rollback.</li>
     * <li>The call throws: nothing was written; a failure to keep is stored afterwards in a transaction of its own (in
     *     the caller's transaction it is written there first, which judges it as the insert judges an answer).</li>
     * </ul>
     *
     * @throws IdempotencyKeyReusedException  the key belongs to another request
     * @throws IdempotencyInProgressException another call holds the key
     * @throws IdempotencyStoreException      the store failed; nothing of the call is kept, or, in the library's
     *                                        transaction, its commit lost the database's connection (it may have taken place)
     */
    @Override
    public <R> AtomicOutcome<R> run(ScopedKey key, String fingerprint, String requestType, Policy policy, AtomicCall<R> call)
            throws Exception {
        transactions.checkNotEnded();
        boolean joined = transactions.isActive();
        return loop.run(key, fingerprint, policy, joined, AtomicOutcome.Replayed::new, (lockWait, started, mine) -> {
            Run run = new Run(key, fingerprint, requestType, policy, started);
            AtomicClaimLoop.Step<AtomicOutcome<R>> marked = mark(run);
            if (marked != null) {
                return marked;
            }
            Callable<AtomicClaimLoop.Step<AtomicOutcome<R>>> attempt = () -> {
                Instant read = clock.instant();
                IdempotencyRecord kept = keptInStore(run);
                if (kept != null) {
                    return replayKept(run, kept, read); // the marker goes with the finally below
                }
                run.begin(mine);
                return run.call(call, lockWait, joined);
            };
            AtomicClaimLoop.Step<AtomicOutcome<R>> step;
            try {
                if (joined) {
                    step = attempt.call();
                } else {
                    java.util.concurrent.atomic.AtomicReference<AtomicClaimLoop.Step<AtomicOutcome<R>>> returned =
                            new java.util.concurrent.atomic.AtomicReference<>();
                    try {
                        step = transactions.required(() -> {
                            AtomicClaimLoop.Step<AtomicOutcome<R>> s = attempt.call();
                            returned.set(s);
                            return s;
                        });
                    } catch (Exception | Error e) {
                        AtomicClaimLoop.Step<AtomicOutcome<R>> notKept = run.failureNotKept(e);
                        if (notKept == null && e instanceof Error error) {
                            throw error;
                        }
                        step = notKept != null ? notKept : afterLostCommit(key, (Exception) e, returned.get());
                    }
                }
            } finally {
                if (!run.begun) {
                    cache.unmark(key, run.holder); // no transaction began: nothing else lets it go
                }
            }
            return step;
        });
    }

    /**
     * Marks the key for a door that runs the work itself (HTTP), and begins a transaction on this thread when the caller
     * has none: {@link Decision.Held}, settled by {@link Claimed#complete} (the one insert, and the commit) or
     * {@link Claimed#giveUp}. Nothing is written before the settlement.
     */
    @Override
    public Decision hold(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        transactions.checkNotEnded();
        boolean joined = transactions.isActive();
        try {
            return loop.run(key, fingerprint, policy, joined, Decision.Replay::new, (lockWait, started, mine) -> {
                Run run = new Run(key, fingerprint, requestType, policy, started);
                AtomicClaimLoop.Step<Decision> marked = mark(run);
                if (marked != null) {
                    return marked;
                }
                HeldTransaction held;
                try {
                    held = joined ? HeldTransaction.CALLERS : new HeldTransaction.OnRequestThread(transactions.begin());
                } catch (RuntimeException | Error e) {
                    cache.unmark(key, run.holder);
                    throw e;
                }
                IdempotencyRecord kept;
                Instant read = clock.instant();
                try {
                    kept = keptInStore(run);
                } catch (RuntimeException | Error e) {
                    abandon(run, held);
                    throw e;
                }
                if (kept != null) {
                    abandon(run, held);
                    return replayKept(run, kept, read);
                }
                run.begin(mine);
                return new AtomicClaimLoop.Step.Done<>(new Decision.Held(new Hold(run, held, lockWait)));
            });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IdempotencyStoreException("Could not claim the " + key, e);
        }
    }

    /**
     * The key's finished record in the store, read before the work runs, in the work's transaction (on the connection
     * its insert uses): {@code null} when there is none. The cache answered first and had none; but a cache's "absent"
     * vouches for nothing (it was flushed, its entry evicted, its node restarted, or the key was finished on another
     * node with a cache of its own), so the store, the judge, is asked: a retry of a finished key never runs the work
     * again. Read under the marker, so that the duplicates it holds off do not read too.
     *
     * @throws IdempotencyStoreException the store could not be read; the call does not run
     */
    private IdempotencyRecord keptInStore(Run run) {
        return calls.call(run.key, "Could not read the ", () -> finished(store.find(run.key).orElse(null)));
    }

    /** Replays the record the store kept (the call does not run), and caches it for the next duplicate here. */
    private <T> AtomicClaimLoop.Step<T> replayKept(Run run, IdempotencyRecord kept, Instant readStarted) {
        cache.putLoaded(kept, readStarted);
        return new AtomicClaimLoop.Step.Replayed<>(replies.replay(run.key, kept, run.fingerprint, run.started, false).record());
    }

    /** A held call that will not run: the transaction begun for it ends, the caller's is left as it is, the marker goes. */
    private void abandon(Run run, HeldTransaction held) {
        try {
            if (held.commitsHere()) {
                held.abort(null, null);
            }
        } finally {
            cache.unmark(run.key, run.holder);
        }
    }

    /**
     * Marks the key in the shared cache, and looks at the cache once more: {@code null} when this call may run; else
     * the step (another call's marker, or its finished record). The second look closes the window in which the call that
     * held the key finished between this call's first look and its marks: the holder caches its record before it lets
     * its marks go, so a call that gets the marks after that finds the record.
     */
    private <T> AtomicClaimLoop.Step<T> mark(Run run) {
        if (!cache.mark(run.key, run.holder, run.policy.lease())) {
            // Another call holds the marker; it may be one that found the key finished in the store and is about to
            // replay it: so is this call, then, rather than "in progress". A store that cannot be read changes nothing
            // here: the marker holds this call off as before (never a failure a door could let run unprotected).
            Instant read = clock.instant();
            IdempotencyRecord kept = finishedInStore(run.key);
            if (kept != null) {
                return replayKept(run, kept, read);
            }
            return new AtomicClaimLoop.Step.Blocked<>(false, Replies.MIN_RETRY_AFTER, true);
        }
        IdempotencyRecord finished = cache.finished(run.key);
        if (finished == null) {
            return null;
        }
        cache.unmark(run.key, run.holder);
        return new AtomicClaimLoop.Step.Replayed<>(replies.replay(run.key, finished, run.fingerprint, run.started, true).record());
    }

    /** Writes the work and its answer in one transaction, as the atomic claim does. */
    @Override
    public boolean workCommitsWithAnswer() {
        return true;
    }

    /** One run of the work under this node's and the cache's markers, in one transaction. */
    private final class Run {
        final ScopedKey key;
        final String fingerprint;
        final String requestType;
        final Policy policy;
        final long started;
        final Instant now;
        /** Unique to this call: this node, this engine's start and a count (no random number drawn per call). */
        final String holder = holderPrefix + runs.incrementAndGet();
        final AtomicReference<IdempotencyRecord> written = new AtomicReference<>();
        /** A failure the method kept, in the library's transaction: stored once that transaction rolled back. */
        final AtomicReference<byte[]> failureAfterwards = new AtomicReference<>();
        /** What storing it found ({@code null}: not known, the store could not be written in time). */
        final AtomicReference<Claim> failureDecided = new AtomicReference<>();
        volatile boolean begun;

        Run(ScopedKey key, String fingerprint, String requestType, Policy policy, long started) {
            this.key = key;
            this.fingerprint = fingerprint;
            this.requestType = requestType;
            this.policy = policy;
            this.started = started;
            this.now = clock.instant();
        }

        /** Holds the key on this node until the transaction ends, and then lets it go on every node. */
        void begin(AtomicClaimLoop.LocalClaim mine) {
            String id = key.cacheId();
            keys.remember(key);
            transactions.afterCompletion(committed -> {
                // In this order: a failure to keep is stored, and the record is in the cache, before any duplicate is
                // woken or any mark goes, so that a call that marks next finds the answer instead of running (in the
                // caller's transaction the failure was stored before its caller heard it). Whatever the first steps do,
                // the key is let go.
                try {
                    byte[] failure = failureAfterwards.get();
                    if (failure != null) {
                        failureDecided.set(leased.keepFailureAfterwards(key, fingerprint, requestType, policy, failure));
                    }
                    IdempotencyRecord record = written.get();
                    if (committed && record != null) {
                        completions.finished(record);
                    } else {
                        completions.changed(key);
                    }
                } finally {
                    cache.unmark(key, holder);
                    loop.forget(id, mine);
                }
            });
            mine.acquired = true;
            begun = true;
            observer.get().executed(key, Duration.ofNanos(System.nanoTime() - started), false);
        }

        /** Runs the work, then writes its finished record into the transaction. */
        <R> AtomicClaimLoop.Step<AtomicOutcome<R>> call(AtomicCall<R> call, Duration lockWait, boolean joined) throws Exception {
            R value;
            try {
                value = call.run();
            } catch (Throwable t) {
                if (call.keeps(t) && !joined) {
                    // The library's transaction rolls back first (its connection goes back to the pool), then the
                    // failure is stored, before this node's duplicates are let go; the caller's answer follows from
                    // what that found (failureNotKept).
                    failureAfterwards.set(call.failure(t));
                } else if (call.keeps(t)) {
                    AtomicClaimLoop.Step<AtomicOutcome<R>> other = keepFailure(call.failure(t), t);
                    if (other != null) {
                        return other;
                    }
                }
                throw sneaky(t);
            }
            if (transactions.isRollbackOnly()) {
                LOG.log(Level.FINE, "{0} ran, but its transaction is marked for rollback: nothing is remembered", key);
                return new AtomicClaimLoop.Step.Done<>(new AtomicOutcome.Ran<>(value));
            }
            byte[] response;
            try {
                response = call.response(value);
            } catch (RuntimeException | Error e) {
                // The result cannot be stored: nothing of the call is kept.
                if (!joined) {
                    transactions.setRollbackOnly();
                }
                throw e;
            }
            AtomicClaimLoop.Step<AtomicOutcome<R>> lost = write(response, lockWait, joined);
            return lost != null ? lost : new AtomicClaimLoop.Step.Done<>(new AtomicOutcome.Ran<>(value));
        }

        /**
         * A failure the work threw in the caller's transaction, which the method keeps: stored as the key's answer before
         * its caller hears it, in transactions of its own (a leased claim and its completion, on a clean thread), while
         * the caller's transaction is still open. That transaction holds no row of the key, so nothing waits on it; and it
         * decides nothing: it rolls back (the work with it) or commits what the caller chooses. Stored, the failure is the
         * answer a duplicate on any node finds, cache or none, and {@code null} is returned: the caller is handed its
         * failure. It costs a second connection for a moment, while the caller's is held. Else see {@link #answerFor}.
         *
         * @throws IdempotencyStoreException     the failure could not be stored: the caller's transaction is marked for
         *                                       rollback, and a retry finds the failure or runs anew
         * @throws IdempotencyInProgressException another call's row was there first
         * @throws IdempotencyKeyReusedException  another request's row was there first
         */
        <T> AtomicClaimLoop.Step<T> keepFailure(byte[] failure, Throwable thrown) {
            Claim claim;
            try {
                claim = leased.keepFailure(key, fingerprint, requestType, policy, failure);
            } catch (IdempotencyStoreException e) {
                transactions.setRollbackOnly();
                e.addSuppressed(thrown); // the method's own failure, for the log: not known to be the key's answer
                throw e;
            }
            if (claim instanceof Claim.Acquired) {
                // The key stays this transaction's until it ends: a second call of it in the transaction is refused at
                // once, as any key's is, rather than waiting on this call's hold of it.
                return null;
            }
            transactions.setRollbackOnly();
            return answerFor(claim, thrown, true);
        }

        /**
         * A kept failure of the library's transaction, once it rolled back and the failure was stored, or not: {@code null}
         * when it was (the caller is handed its failure), or when the method threw none to keep. Else see
         * {@link #answerFor} (which answers the store's failure when whether it was stored is not known).
         */
        <T> AtomicClaimLoop.Step<T> failureNotKept(Throwable thrown) {
            if (failureAfterwards.get() == null) {
                return null;
            }
            Claim decided = failureDecided.get();
            return decided instanceof Claim.Acquired ? null : answerFor(decided, thrown, false);
        }

        /**
         * Another call's row of the key came first (its answer committed while the method ran, seen late by a snapshot
         * or by a cache that could not hold this call off): it is the key's, and this call's failure is not kept. The
         * caller gets that call's answer ({@link Replies#failureLost}); in its own transaction, which cannot commit now,
         * "in progress" instead of a replay (the retry replays).
         */
        private <T> AtomicClaimLoop.Step<T> answerFor(Claim claim, Throwable thrown, boolean joined) {
            if (joined && claim instanceof Claim.Existing existing && existing.record().isFinished()
                    && existing.record().fingerprint().equals(fingerprint)) {
                IdempotencyInProgressException refused = replies.rejected(key, Replies.MIN_RETRY_AFTER);
                refused.addSuppressed(thrown); // the method's own failure, for the log: not the key's answer
                throw refused;
            }
            return new AtomicClaimLoop.Step.Replayed<>(replies.failureLost(key, claim, fingerprint, started, clock, thrown).record());
        }

        /**
         * The one insert of the finished record: {@code null} when written; else the transaction is marked for rollback
         * and the step says what the caller is answered (a replay of the other's, in progress, or a reuse).
         */
        <T> AtomicClaimLoop.Step<T> write(byte[] response, Duration lockWait, boolean joined) {
            Instant end = clock.instant();
            ClaimRequest request = new ClaimRequest(key, fingerprint, requestType, nodeId, now, now.plus(policy.lease()),
                    now.plus(policy.ttl()));
            Completion completion = new Completion(RecordStatus.COMPLETED, response, end, true);
            Claim claim = calls.claim(request, () -> claims.claimFinishedInTransaction(request, completion, lockWait));
            if (claim instanceof Claim.Acquired acquired) {
                Ticket ticket = acquired.ticket();
                written.set(ticket.finished(RecordStatus.COMPLETED, response, end));
                observer.get().completed(key, Duration.ofNanos(System.nanoTime() - started), false);
                return null;
            }
            // Another call ran too, and its row is there first: nothing of this one may commit.
            transactions.setRollbackOnly();
            LOG.log(Level.FINE, "{0}: another call stored its answer first; this call''s work rolls back", key);
            if (claim instanceof Claim.Existing existing && existing.record().isFinished()) {
                IdempotencyRecord winner = existing.record();
                if (!winner.fingerprint().equals(fingerprint)) {
                    throw replies.reused(key);
                }
                if (joined) {
                    throw replies.rejected(key, Replies.MIN_RETRY_AFTER); // the caller's transaction cannot commit now
                }
                return new AtomicClaimLoop.Step.Replayed<>(replies.replay(key, winner, fingerprint, started, false).record());
            }
            if (claim instanceof Claim.Existing existing) {
                // A leased claim of the key in progress (a method that asks for leased claims shares it).
                if (!existing.record().fingerprint().equals(fingerprint)) {
                    throw replies.reused(key);
                }
                return new AtomicClaimLoop.Step.Blocked<>(false, Replies.retryAfter(Duration.between(end, existing.record().leaseUntil())));
            }
            return new AtomicClaimLoop.Step.Blocked<>(((Claim.Busy) claim).settled(), Replies.MIN_RETRY_AFTER);
        }
    }

    /** A key held for a door's work: settled once, on the thread that holds it. */
    private final class Hold implements Claimed {
        private final Run run;
        private final HeldTransaction transaction;
        private final Duration lockWait;

        Hold(Run run, HeldTransaction transaction, Duration lockWait) {
            this.run = run;
            this.transaction = transaction;
            this.lockWait = lockWait;
        }

        @Override
        public Ticket ticket() {
            return new Ticket(run.key, nodeId, 1, run.now.plus(run.policy.lease()), run.now.plus(run.policy.ttl()), 1, false,
                    run.fingerprint, run.requestType, run.now);
        }

        /**
         * The one insert, then the commit when the transaction is the door's.
         *
         * @throws IdempotencyInProgressException another call stored the key's answer first: nothing of this one is kept,
         *                                        a retry replays the other's
         */
        @Override
        public boolean complete(byte[] response) {
            if (transactions.isRollbackOnly()) {
                LOG.log(Level.FINE, "{0} ran, but its transaction is marked for rollback: nothing is remembered", run.key);
                giveUp();
                return false;
            }
            AtomicClaimLoop.Step<Object> lost;
            try {
                lost = run.write(response, lockWait, !transaction.commitsHere());
            } catch (RuntimeException e) {
                giveUp();
                throw e;
            }
            if (lost != null) {
                giveUp();
                if (lost instanceof AtomicClaimLoop.Step.Replayed<Object> replayed) {
                    throw new AnsweredFirst(replayed.record()); // the door answers with it: the first answer
                }
                if (transaction.commitsHere()) {
                    // Another call's transaction held the row: its answer is the first, once it commits. A duplicate
                    // that waits (WAIT) waits for it here, as it would have before running.
                    IdempotencyRecord winner = awaitFinished(run);
                    if (winner != null && winner.fingerprint().equals(run.fingerprint)) {
                        throw new AnsweredFirst(winner);
                    }
                    if (winner != null) {
                        throw replies.reused(run.key); // the key's answer is another request's
                    }
                }
                throw replies.rejected(run.key, lost instanceof AtomicClaimLoop.Step.Blocked<Object> b ? b.retryAfter() : Replies.MIN_RETRY_AFTER);
            }
            if (transaction.commitsHere()) {
                try {
                    transaction.commit();
                } catch (RuntimeException e) {
                    if (lostTheKey(run.key, e)) {
                        throw replies.rejected(run.key, Replies.MIN_RETRY_AFTER);
                    }
                    observer.get().storeError(run.key.namespace(), e);
                    throw new IdempotencyStoreException("Could not commit the work and the response of the " + run.key, e);
                }
            }
            return true;
        }

        /** Nothing was written: the door's transaction rolls back, or the caller's is left as it is. */
        @Override
        public void giveUp() {
            transaction.abort(null, new HeldTransaction.Actions() {
                @Override
                public void unclaim(Ticket ticket) {
                    // nothing of the claim is in the caller's transaction
                }

                @Override
                public void setRollbackOnly() {
                    transactions.setRollbackOnly();
                }
            });
        }
    }

    /**
     * The key's finished record in the store, read now and, for a call that waits for duplicates' answers, again as
     * the key changes (at least every {@link #LOOK_AGAIN}) until its wait timeout; {@code null} when none came.
     */
    private IdempotencyRecord awaitFinished(Run run) {
        long deadline = run.started + (run.policy.waitForResult() ? run.policy.waitTimeout().toNanos() : 0);
        while (true) {
            try (CompletionSignals.Subscription s = signals.subscribe(run.key)) {
                IdempotencyRecord winner = finishedInStore(run.key);
                long left = deadline - System.nanoTime();
                if (winner != null || left <= 0) {
                    return winner;
                }
                SignalWait.await(s, Durations.min(Duration.ofNanos(left), LOOK_AGAIN), run.key);
            }
        }
    }

    private static final Duration LOOK_AGAIN = Duration.ofMillis(200);

    /**
     * The library's transaction failed: a lost race for the key is judged again (a replay, or in progress); a commit
     * whose database connection failed is the store's failure ({@link LostConnection#atCommit}); else thrown.
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
            throw failure;
        }
        return new AtomicClaimLoop.Step.Blocked<>(true, Replies.MIN_RETRY_AFTER);
    }

    /** Whether the transaction lost to another that committed the key first (a serialization or certification failure). */
    private boolean lostTheKey(ScopedKey key, Exception failure) {
        if (!claims.lostToAnotherCommit(failure)) {
            return false;
        }
        return finishedInStore(key) != null;
    }

    /** The key's finished record in the store, read after a lost race; {@code null} when none, or when it cannot be read. */
    private IdempotencyRecord finishedInStore(ScopedKey key) {
        try {
            return finished(store.find(key).orElse(null));
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not read the " + key + " after a lost race", e);
            return null;
        }
    }

    /** The record when it is finished and unexpired; else {@code null}. */
    private IdempotencyRecord finished(IdempotencyRecord r) {
        return r != null && r.isFinished() && !r.isExpired(clock.instant()) ? r : null;
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
