package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The leased claim ("The life of a key" in CONTRIBUTING.md): the claim is committed on its own before the operation
 * runs, held by a lease that {@link LeaseHeartbeats} renews, and settled afterwards by a completion (inside the
 * caller's transaction when there is one), a kept failure or a release.
 */
final class LeasedFlow implements ClaimFlow {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final IdempotencyStore store;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final CompletionSignals signals;
    private final Executor afterCompletionExecutor;
    private final Duration afterCompletionTimeout;
    private final QuietCache cache;
    private final StoreCalls calls;
    private final Replies replies;
    private final TransactionKeys keys;
    private final Completions completions;
    private final LeaseHeartbeats heartbeats;
    private final Supplier<EngineObserver> observer;

    LeasedFlow(IdempotencyStore store, Clock clock, String nodeId, TransactionBridge transactions, CompletionSignals signals,
               Executor afterCompletionExecutor, Duration afterCompletionTimeout, QuietCache cache, StoreCalls calls,
               Replies replies, TransactionKeys keys, Completions completions, LeaseHeartbeats heartbeats,
               Supplier<EngineObserver> observer) {
        this.store = store;
        this.clock = clock;
        this.nodeId = nodeId;
        this.transactions = transactions;
        this.signals = signals;
        this.afterCompletionExecutor = afterCompletionExecutor;
        this.afterCompletionTimeout = afterCompletionTimeout;
        this.cache = cache;
        this.calls = calls;
        this.replies = replies;
        this.keys = keys;
        this.completions = completions;
        this.heartbeats = heartbeats;
        this.observer = observer;
    }

    /**
     * The claim committed first, then the call; its result completed (in the caller's transaction when there is one), a
     * failure to keep stored, any other released. A {@code CompletionStage} result ({@link AtomicCall#async()}) is settled
     * when it completes: the caller gets a stage that completes once the outcome is stored.
     */
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <R> AtomicOutcome<R> run(ScopedKey key, String fingerprint, String requestType, Policy policy, AtomicCall<R> call)
            throws Exception {
        Decision decision = begin(key, fingerprint, requestType, policy);
        if (decision instanceof Decision.Replay replay) {
            return new AtomicOutcome.Replayed<>(replay.record());
        }
        Ticket ticket = ((Decision.Proceed) decision).ticket();
        R result;
        try {
            result = call.run();
        } catch (Throwable t) {
            settleFailure(ticket, call, t);
            throw t;
        }
        if (!call.async()) {
            complete(ticket, encode(ticket, (AtomicCall) call, result));
            return new AtomicOutcome.Ran<>(result);
        }
        if (result == null) {
            release(ticket);
            return new AtomicOutcome.Ran<>(null);
        }
        java.util.concurrent.CompletableFuture<Object> settled = new java.util.concurrent.CompletableFuture<>();
        ((java.util.concurrent.CompletionStage<?>) result).whenComplete((value, error) -> {
            if (error != null) {
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                try {
                    settleFailure(ticket, call, cause);
                } finally {
                    settled.completeExceptionally(cause);
                }
                return;
            }
            try {
                complete(ticket, encode(ticket, (AtomicCall) call, value));
                settled.complete(value);
            } catch (RuntimeException e) {
                settled.completeExceptionally(e);
            }
        });
        return new AtomicOutcome.Ran<>((R) settled);
    }

    /** A failure to keep is stored; any other releases the key. */
    private void settleFailure(Ticket ticket, AtomicCall<?> call, Throwable failure) {
        if (call.keeps(failure)) {
            fail(ticket, call.failure(failure));
        } else {
            release(ticket);
        }
    }

    /** The result's stored form; when it cannot be written, the key is released at once (not left to its lease). */
    private <R> byte[] encode(Ticket ticket, AtomicCall<R> call, R result) {
        try {
            return call.response(result);
        } catch (RuntimeException e) {
            release(ticket);
            throw e;
        }
    }

    @Override
    public Decision hold(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        Decision decision = begin(key, fingerprint, requestType, policy);
        if (decision instanceof Decision.Proceed proceed) {
            return new Decision.Held(new Leased(proceed.ticket()));
        }
        return decision;
    }

    @Override
    public boolean workCommitsWithAnswer() {
        return false;
    }

    /** A leased claim held by a door: completed with its answer, or released. */
    private final class Leased implements Claimed {
        private final Ticket ticket;

        Leased(Ticket ticket) {
            this.ticket = ticket;
        }

        @Override
        public Ticket ticket() {
            return ticket;
        }

        @Override
        public boolean complete(byte[] response) {
            LeasedFlow.this.complete(ticket, response);
            return true;
        }

        @Override
        public void giveUp() {
            release(ticket);
        }
    }

    /** See {@link IdempotencyEngine#begin}. */
    Decision begin(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        transactions.checkNotEnded();
        long started = System.nanoTime();
        keys.checkNotClaimed(key);
        IdempotencyRecord cached = cache.finished(key);
        if (cached != null) {
            return replies.replay(key, cached, fingerprint, started, true);
        }
        long deadline = System.nanoTime() + policy.waitTimeout().toNanos();
        for (boolean woken = false; ; woken = true) {
            // Woken by a completion, which reaches the cache (on every node) before the wake-up: no SQL.
            IdempotencyRecord done = woken ? cache.finished(key) : null;
            if (done != null) {
                return replies.replay(key, done, fingerprint, started, true);
            }
            CompletionSignals.Subscription subscription = policy.waitForResult() ? signals.subscribe(key) : null;
            try {
                Instant now = clock.instant();
                long claimStarted = System.nanoTime();
                Claim claim = calls.claim(new ClaimRequest(key, fingerprint, requestType, nodeId, now,
                        now.plus(policy.lease()), now.plus(policy.ttl())));
                if (claim instanceof Claim.Acquired acquired) {
                    Ticket ticket = acquired.ticket();
                    keys.remember(key);
                    observer.get().executed(key, Duration.ofNanos(System.nanoTime() - claimStarted), ticket.takeover());
                    if (ticket.takeover()) {
                        LOG.log(Level.WARNING, "Took over {0} from a holder whose lease expired (attempt {1})",
                                new Object[] {key, ticket.attempts()});
                    } else {
                        LOG.log(Level.FINE, "Claimed {0}", key);
                    }
                    heartbeats.start(ticket, policy.lease());
                    return new Decision.Proceed(ticket);
                }
                IdempotencyRecord record = ((Claim.Existing) claim).record();
                if (record.isFinished()) {
                    cache.putLoaded(record, now); // a node that joined late, or a cache that was flushed, learns it here
                    return replies.replay(key, record, fingerprint, started, false);
                }
                if (!record.fingerprint().equals(fingerprint)) {
                    throw replies.reused(key);
                }
                Duration leaseLeft = Duration.between(now, record.leaseUntil());
                long waitLeft = deadline - System.nanoTime();
                if (subscription == null || waitLeft <= 0) {
                    throw replies.rejected(key, leaseLeft);
                }
                // Woken by the first call's completion or release, or at its lease end (take-over); where the cache's
                // wake-ups can be lost, or never come from other nodes (a cache of this JVM's own, or none), it looks
                // again after the cache's bound.
                SignalWait.await(subscription, cache.unwoken(Durations.min(Duration.ofNanos(waitLeft), leaseLeft.plusMillis(1))), key);
            } finally {
                if (subscription != null) {
                    subscription.close();
                }
            }
        }
    }

    /** See {@link IdempotencyEngine#complete}. */
    void complete(Ticket ticket, byte[] response) {
        if (!transactions.isActive() && !transactions.isRollbackOnly()) {
            completeOnItsOwn(ticket, response);
            return;
        }
        heartbeats.stop(ticket);
        Instant now = clock.instant();
        if (transactions.isRollbackOnly()) {
            // Marked for rollback, or rolled back already under the call (its timeout): never completed on its own.
            // The operation's effects will roll back: nothing to remember, the retry must run.
            LOG.log(Level.FINE, "Releasing {0}: its transaction is marked for rollback", ticket.scopedKey());
            release(ticket);
            return;
        }
        // Registered before the write, so that a rollback after it (or of it) always releases the key. A commit whose
        // outcome is unknown (it failed where it may have taken place) neither publishes the answer nor releases the
        // key: its claim is left to its lease, and a duplicate reads the store, which has the answer or the claim.
        transactions.afterOutcome(outcome -> {
            switch (outcome) {
                case COMMITTED -> completions.finished(ticket.finished(RecordStatus.COMPLETED, response, now));
                case ROLLED_BACK -> afterTransaction(() -> release(ticket),
                        "Could not release " + ticket.scopedKey() + " after its transaction rolled back");
                case UNKNOWN -> {
                    keys.forget(ticket.scopedKey());
                    completions.changed(ticket.scopedKey());
                    LOG.log(Level.WARNING, "The commit of {0} failed where it may have taken place: the key is neither"
                            + " answered from the cache nor released; its retry finds its answer in the store, or takes"
                            + " its claim over once its lease ended", ticket.scopedKey());
                }
            }
        });
        calls.finish(ticket, new Completion(RecordStatus.COMPLETED, response, now, true), true);
        LOG.log(Level.FINE, "Completed {0} with the transaction", ticket.scopedKey());
    }

    /** See {@link IdempotencyEngine#completeOnItsOwn}. */
    IdempotencyRecord completeOnItsOwn(Ticket ticket, byte[] response) {
        heartbeats.stop(ticket);
        Instant now = clock.instant();
        calls.finish(ticket, new Completion(RecordStatus.COMPLETED, response, now, false), false);
        IdempotencyRecord record = ticket.finished(RecordStatus.COMPLETED, response, now);
        completions.finished(record);
        LOG.log(Level.FINE, "Completed {0}", ticket.scopedKey());
        return record;
    }

    /** See {@link IdempotencyEngine#fail}. */
    void fail(Ticket ticket, byte[] failure) {
        heartbeats.stop(ticket);
        keys.forget(ticket.scopedKey()); // written in a transaction of its own: a second call reads it
        Instant now = clock.instant();
        calls.finish(ticket, new Completion(RecordStatus.FAILED, failure, now, false), false);
        completions.finished(ticket.finished(RecordStatus.FAILED, failure, now));
        LOG.log(Level.FINE, "Kept the failure of {0}", ticket.scopedKey());
    }

    /** See {@link IdempotencyEngine#release}. */
    void release(Ticket ticket) {
        heartbeats.stop(ticket);
        try {
            boolean released = store.release(ticket, clock.instant());
            keys.forget(ticket.scopedKey());
            LOG.log(Level.FINE, released ? "Released {0}" : "Did not release {0}: no longer held", ticket.scopedKey());
            if (released) {
                observer.get().released(ticket.scopedKey());
            }
        } catch (RuntimeException e) {
            observer.get().storeError(ticket.scopedKey().namespace(), e);
            // The lease will expire and the key will be taken over: nothing is lost but time.
            LOG.log(Level.WARNING, "Could not release " + ticket.scopedKey() + "; it frees itself when its lease ends", e);
        } finally {
            cache.evict(ticket.scopedKey());
            completions.changed(ticket.scopedKey());
        }
    }

    /**
     * A kept failure of an atomic call, stored once its transaction has ended (that transaction held the key's row, so
     * the failure cannot be written beside it while it is open): a leased claim and its completion, on a clean thread.
     *
     * @return the claim that decided: acquired (the failure is kept), or another call's row of the key that came first
     *         (a duplicate that waited for the row takes the key in the moment between); {@code null} when the store
     *         could not be written in time (logged)
     */
    Claim keepFailureAfterwards(ScopedKey key, String fingerprint, String requestType, Policy policy, byte[] failure) {
        AtomicReference<Claim> decided = new AtomicReference<>();
        afterTransaction(() -> decided.set(claimAndFail(key, fingerprint, requestType, policy, failure)),
                "Could not keep the failure of " + key + "; a retry runs the operation again");
        Claim claim = decided.get();
        if (claim != null && !(claim instanceof Claim.Acquired)) {
            LOG.log(Level.WARNING, "Did not keep the failure of the {0}: another call of the key claimed it first, and"
                    + " its answer is the one retries get", key);
        }
        return claim;
    }

    /**
     * A kept failure of an optimistic call, stored before its caller hears it, while the work's transaction is still
     * open (it holds no row of the key): a leased claim and its completion, in transactions of their own on a clean
     * thread, waited for (bounded). The claim that decided is returned: acquired (the failure is the key's answer,
     * finished and cached), or the row of the key that was there first.
     *
     * @throws IdempotencyStoreException the store could not be written in time: whether the failure is kept is not known
     */
    Claim keepFailure(ScopedKey key, String fingerprint, String requestType, Policy policy, byte[] failure) {
        try {
            return CompletableFuture.supplyAsync(() -> claimAndFail(key, fingerprint, requestType, policy, failure),
                    afterCompletionExecutor).get(afterCompletionTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw new IdempotencyStoreException("Could not keep the failure of the " + key + ": no thread to write it on", e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof IdempotencyStoreException store) {
                throw store;
            }
            throw new IdempotencyStoreException("Could not keep the failure of the " + key, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IdempotencyStoreException("Could not keep the failure of the " + key + " within "
                    + afterCompletionTimeout.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyStoreException("Interrupted while keeping the failure of the " + key, e);
        }
    }

    /** A leased claim of the key and, acquired, its completion with the failure: each in a transaction of its own. */
    private Claim claimAndFail(ScopedKey key, String fingerprint, String requestType, Policy policy, byte[] failure) {
        Instant now = clock.instant();
        Claim claim = calls.claim(new ClaimRequest(key, fingerprint, requestType, nodeId, now, now.plus(policy.lease()),
                now.plus(policy.ttl())));
        if (claim instanceof Claim.Acquired acquired) {
            try {
                fail(acquired.ticket(), failure);
            } catch (IdempotencyStoreException e) {
                // The completion's write failed: the claim is not left "in progress" for its lease (best effort, as
                // the store failed). Any other failure came after the write, and a finished record is not released.
                release(acquired.ticket());
                throw e;
            }
        }
        return claim;
    }

    /**
     * Store work after a transaction completed, which may still be bound to this thread: on a clean thread, waited for
     * (bounded), so that the caller's retry sees it.
     */
    private void afterTransaction(Runnable work, String failure) {
        try {
            CompletableFuture<Void> done = CompletableFuture.runAsync(work, afterCompletionExecutor);
            done.get(afterCompletionTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.log(Level.WARNING, failure, e);
        }
    }
}
