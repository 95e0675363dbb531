package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyClaimedInTransactionException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.AtomicClaims;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one engine behind every entry point: the state machine of SPEC section 2.
 *
 * <ol>
 * <li>{@link #begin} claims the key in the store (its own short transaction), or answers with a replay
 *     (finished, same fingerprint), a misuse ({@link IdempotencyKeyReusedException}: another fingerprint),
 *     or a conflict ({@link IdempotencyInProgressException}, or a wait until the first call finishes).</li>
 * <li>The caller runs the operation, then calls {@link #complete}, {@link #fail} (an outcome to keep) or
 *     {@link #release} (an outcome not to keep) with the ticket.</li>
 * </ol>
 *
 * <p>A completion inside an active transaction joins it; should that transaction roll back, the key is
 * released after it, so that a retry runs again. Thread-safe.
 */
public final class IdempotencyEngine {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);
    private static final Duration MIN_POLL = Duration.ofMillis(50);
    private static final Duration MAX_POLL = Duration.ofMillis(200);

    private final IdempotencyStore store;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final CompletionSignals signals;
    private final Executor afterCompletionExecutor;
    private final Duration afterCompletionTimeout;
    private final RecordCache cache;
    private final AtomicClaims atomicClaims;
    /** Keys claimed atomically by this node in transactions that have not completed: a duplicate here needs no SQL. */
    private final ConcurrentHashMap<String, LocalClaim> heldHere = new ConcurrentHashMap<>();
    private volatile EngineObserver observer = EngineObserver.NONE;
    /** Renews the leases of this node's running leased claims (SPEC L1); null: leases are not renewed. */
    private volatile java.util.concurrent.ScheduledExecutorService renewals;
    private volatile Duration renewalLimit = Duration.ZERO;
    /** The heartbeat of each leased claim this node holds and has not completed or released. */
    private final ConcurrentHashMap<Ticket, java.util.concurrent.Future<?>> heartbeats = new ConcurrentHashMap<>();
    /** "Seen" and "last seen" of ids ({@link #sight}). */
    private final Sightings sightings = new Sightings(this);
    /** Callbacks waiting for a key to finish ({@link #whenFinished}), by {@link ScopedKey#cacheId()}. */
    private final ConcurrentHashMap<String, java.util.List<FinishWatch>> finishWatches = new ConcurrentHashMap<>();

    /**
     * @param store                   the records
     * @param clock                   the time of records (leases, expiry)
     * @param nodeId                  this node's id, the owner of its claims
     * @param transactions            the caller's transactions
     * @param signals                 wakes waiting duplicates
     * @param afterCompletionExecutor runs the release after a rolled back transaction, on a thread with no
     *                                transaction of its own
     * @param afterCompletionTimeout  how long a rolled back transaction waits for that release
     */
    public IdempotencyEngine(IdempotencyStore store, Clock clock, String nodeId, TransactionBridge transactions,
                             CompletionSignals signals, Executor afterCompletionExecutor,
                             Duration afterCompletionTimeout) {
        this(store, clock, nodeId, transactions, signals, afterCompletionExecutor, afterCompletionTimeout, RecordCache.NONE);
    }

    /**
     * As above, with a cache of finished records in front of the store.
     *
     * @param cache answers duplicates of finished keys without the store; {@link RecordCache#NONE} for none
     */
    public IdempotencyEngine(IdempotencyStore store, Clock clock, String nodeId, TransactionBridge transactions,
                             CompletionSignals signals, Executor afterCompletionExecutor,
                             Duration afterCompletionTimeout, RecordCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
        this.store = Objects.requireNonNull(store, "store");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.signals = Objects.requireNonNull(signals, "signals");
        this.afterCompletionExecutor = Objects.requireNonNull(afterCompletionExecutor, "afterCompletionExecutor");
        this.afterCompletionTimeout = Objects.requireNonNull(afterCompletionTimeout, "afterCompletionTimeout");
        this.atomicClaims = store instanceof AtomicClaims a ? a : null;
        signals.onSignal(this::signalled);
    }

    /** An engine with no transactions and local signals, for tests and Java SE use. */
    public static IdempotencyEngine simple(IdempotencyStore store, Clock clock, String nodeId) {
        return new IdempotencyEngine(store, clock, nodeId, TransactionBridge.NONE, new LocalCompletionSignals(),
                Runnable::run, Duration.ofSeconds(30));
    }

    /** Who is told of every decision (counters, events). */
    public void observer(EngineObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
    }

    public EngineObserver observer() {
        return observer;
    }

    /**
     * Renews the lease of every leased claim this node holds while its operation runs (SPEC L1): every third of
     * the lease, fenced by owner, version and status, until the claim is completed, failed or released, for at
     * most {@code limit} after the claim (and never past the record's time to live): a claim whose door never
     * settles it (a request that ended without a response filter) is not held for ever. A holder that died
     * stops renewing, and its claim is taken over one lease later. Without this, a call that outlives its lease
     * is taken over while it still runs.
     *
     * @param scheduler where the heartbeats run; {@code null} stops every heartbeat (the node shuts down)
     * @param limit     how long after its claim a call's lease is renewed at most; zero: not renewed
     */
    public void renewLeasesWith(java.util.concurrent.ScheduledExecutorService scheduler, Duration limit) {
        this.renewalLimit = Objects.requireNonNull(limit, "limit");
        this.renewals = limit.isZero() ? null : scheduler;
        if (renewals == null) {
            heartbeats.keySet().forEach(this::stopHeartbeat);
        }
    }

    public IdempotencyStore store() {
        return store;
    }

    public Clock clock() {
        return clock;
    }

    public String nodeId() {
        return nodeId;
    }

    /**
     * Claims the key or answers without running: see the class comment.
     *
     * @param key         scope and key
     * @param fingerprint SHA-256 of the request (hex)
     * @param requestType optional request type, or {@code null}
     * @param policy      ttl, lease, and what a duplicate does while the first call runs
     * @return {@link Decision.Proceed} with the ticket, or {@link Decision.Replay} of a finished record
     * @throws IdempotencyKeyReusedException   the key belongs to another request
     * @throws IdempotencyInProgressException  the first call is running (and waiting was not asked for,
     *                                         or timed out)
     * @throws IdempotencyStoreException       the store failed: nothing was claimed, do not run
     */
    public Decision begin(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        long started = System.nanoTime();
        checkNotClaimedInThisTransaction(key);
        Decision fromCache = fromCache(key, fingerprint, started);
        if (fromCache != null) {
            return fromCache;
        }
        long deadline = System.nanoTime() + policy.waitTimeout().toNanos();
        for (boolean woken = false; ; woken = true) {
            // Woken by a completion, which reaches the cache (on every node) before the wake-up: no SQL.
            Decision done = woken ? fromCache(key, fingerprint, started) : null;
            if (done != null) {
                return done;
            }
            CompletionSignals.Subscription subscription = policy.waitForResult() ? signals.subscribe(key) : null;
            try {
                Instant now = clock.instant();
                long claimStarted = System.nanoTime();
                Claim claim = claim(new ClaimRequest(key, fingerprint, requestType, nodeId, now,
                        now.plus(policy.lease()), now.plus(policy.ttl())));
                if (claim instanceof Claim.Acquired acquired) {
                    Ticket ticket = acquired.ticket();
                    rememberInThisTransaction(key);
                    observer.executed(key, Duration.ofNanos(System.nanoTime() - claimStarted), ticket.takeover());
                    if (ticket.takeover()) {
                        LOG.log(Level.WARNING, "Took over {0} from a holder whose lease expired (attempt {1})",
                                new Object[] {key, ticket.attempts()});
                    } else {
                        LOG.log(Level.FINE, "Claimed {0}", key);
                    }
                    startHeartbeat(ticket, policy.lease());
                    return new Decision.Proceed(ticket);
                }
                IdempotencyRecord record = ((Claim.Existing) claim).record();
                if (record.isFinished()) {
                    cacheLoadedQuietly(record); // a node that joined late, or a cache that was flushed, learns it here
                    return finished(key, record, fingerprint, started, false);
                }
                if (!record.fingerprint().equals(fingerprint)) {
                    throw reused(key);
                }
                Duration leaseLeft = Duration.between(now, record.leaseUntil());
                long waitLeft = deadline - System.nanoTime();
                if (subscription == null || waitLeft <= 0) {
                    throw rejected(key, leaseLeft);
                }
                // Woken by the first call's completion or release, or at its lease end (take-over); where the cache's
                // wake-ups can be lost, it looks again after the cache's bound.
                subscription.await(unwoken(min(Duration.ofNanos(waitLeft), leaseLeft.plusMillis(1))));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IdempotencyException("Interrupted while waiting for the " + key, e);
            } finally {
                if (subscription != null) {
                    subscription.close();
                }
            }
        }
    }

    /**
     * Whether {@link #runAtomic} can work here: the store writes claims inside transactions and a transaction
     * can be begun when the caller has none.
     */
    public boolean supportsAtomicClaims() {
        return atomicClaims != null && transactions.canBegin();
    }

    /** As {@link #supportsAtomicClaims()}, and, when {@code onThread}, {@link #beginAtomic} can begin a transaction too. */
    public boolean supportsAtomicClaims(boolean onThread) {
        return supportsAtomicClaims() && (!onThread || transactions.canBeginOnThread());
    }

    /**
     * The atomic claim (SPEC section 2a): the claim row, the operation's transactional work and the stored
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
     * @throws IdempotencyStoreException      the store failed; the operation did not run
     * @throws Exception                      what the operation threw
     */
    public <R> AtomicOutcome<R> runAtomic(ScopedKey key, String fingerprint, String requestType, Policy policy,
                                          AtomicCall<R> call) throws Exception {
        boolean joined = transactions.isActive();
        return atomically(key, fingerprint, policy, joined, AtomicOutcome.Replayed::new, (lockWait, started, mine) -> {
            java.util.concurrent.Callable<Step<AtomicOutcome<R>>> attempt = () -> {
                Step<AtomicOutcome<R>> step = claimStep(key, fingerprint, requestType, policy, lockWait, started, mine, joined, null);
                return step instanceof Step.Claimed<AtomicOutcome<R>> claimed
                        ? new Step.Done<>(new AtomicOutcome.Ran<>(runHeld(claimed.hold(), call))) : step;
            };
            if (joined) {
                return attempt.call();
            }
            try {
                return transactions.required(attempt);
            } catch (Exception e) {
                return afterLostCommit(key, e);
            }
        });
    }

    /**
     * The library's transaction failed. When it lost to another transaction's commit (on a multi-primary database, a
     * certification failure: another node committed the same key first) and the key now has a record, the claim is
     * judged again in a new transaction (a replay, or "in progress"); the operation's work rolled back with it.
     * Otherwise the failure is the caller's.
     */
    private <T> Step<T> afterLostCommit(ScopedKey key, Exception failure) throws Exception {
        if (!lostTheKey(key, failure)) {
            throw failure; // not a lost race for the key (a conflict on the operation's own rows, or the store cannot tell)
        }
        return new Step.Blocked<>(true, MIN_RETRY_AFTER); // judged again: a replay of the winner, or "in progress"
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
    public Decision beginAtomic(ScopedKey key, String fingerprint, String requestType, Policy policy) {
        boolean joined = transactions.isActive();
        try {
            return atomically(key, fingerprint, policy, joined, Decision.Replay::new, (lockWait, started, mine) -> {
                TransactionBridge.Begun begun = joined ? null : transactions.begin();
                Step<Decision> step;
                try {
                    step = claimStep(key, fingerprint, requestType, policy, lockWait, started, mine, joined, begun);
                } catch (RuntimeException | Error e) {
                    if (begun != null) {
                        begun.rollback();
                    }
                    throw e;
                }
                if (step instanceof Step.Claimed<Decision> claimed) {
                    return new Step.Done<>(new Decision.Held(claimed.hold()));
                }
                if (begun != null) {
                    // Nothing of this attempt is to be kept: a read, or a statement that broke the transaction.
                    begun.rollback();
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
    public boolean completeAtomic(AtomicHold hold, byte[] response) {
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
            throw hold.begun != null && lostTheKey(ticket.scopedKey(), e) ? lostToAnother(ticket.scopedKey()) : e;
        }
        if (hold.begun != null) {
            try {
                hold.begun.commit();
            } catch (RuntimeException e) {
                if (lostTheKey(ticket.scopedKey(), e)) {
                    throw lostToAnother(ticket.scopedKey());
                }
                observer.storeError(ticket.scopedKey().namespace(), e);
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
        observer.conflict(key);
        return rejected(key, MIN_RETRY_AFTER);
    }

    /** Gives a held atomic claim up: its transaction rolls back (the engine's), or its claim row goes (the caller's). */
    public void abortAtomic(AtomicHold hold) {
        if (hold.begun != null) {
            hold.begun.rollback();
        } else {
            unclaim(hold.ticket());
        }
    }

    /** One attempt of an atomic claim, by the caller that leads on this node: a step, inside a transaction. */
    @FunctionalInterface
    private interface Leader<T> {
        Step<T> attempt(Duration lockWait, long started, LocalClaim mine) throws Exception;
    }

    /**
     * The loop of every atomic claim: the cache first; then, when no other call on this node is claiming or
     * holding the key, one attempt; then, when another transaction holds it, a retry, a wait without a
     * transaction or a connection, or the in-progress answer.
     */
    private <T> T atomically(ScopedKey key, String fingerprint, Policy policy, boolean joined,
                             java.util.function.Function<IdempotencyRecord, T> replay, Leader<T> leader) throws Exception {
        if (atomicClaims == null) {
            throw new IllegalStateException(store.getClass().getName() + " cannot claim inside a transaction");
        }
        if (joined) {
            checkNotClaimedInThisTransaction(key);
        }
        long started = System.nanoTime();
        long deadline = started + policy.waitTimeout().toNanos();
        // Waiting for another caller on this node to learn whether it claimed is bounded like a claim statement.
        long decisionDeadline = started + policy.claimLockTimeout().toNanos() + MIN_POLL.toNanos();
        String id = key.cacheId();
        int settledRetries = 0;
        while (true) {
            Decision done = fromCache(key, fingerprint, started);
            if (done != null) {
                return replay.apply(((Decision.Replay) done).record());
            }
            // Subscribed before anything is read, so that no wake-up in between is missed.
            CompletionSignals.Subscription subscription = signals.subscribe(key);
            try {
                Duration retryAfter = MIN_RETRY_AFTER;
                LocalClaim mine = new LocalClaim();
                LocalClaim other = heldHere.putIfAbsent(id, mine);
                if (other != null) {
                    // Another call on this node claims the key, or holds it: no SQL, no connection.
                    long now = System.nanoTime();
                    if (!other.acquired && now < decisionDeadline) {
                        subscription.await(min(Duration.ofNanos(decisionDeadline - now), MAX_POLL));
                        continue;
                    }
                } else {
                    Step<T> step;
                    try {
                        long waitLeft = Math.max(0, deadline - System.nanoTime());
                        Duration lockWait = !policy.waitForResult() ? policy.claimLockTimeout()
                                : joined ? Duration.ofNanos(waitLeft) : min(policy.claimLockTimeout(), Duration.ofNanos(waitLeft));
                        step = leader.attempt(lockWait, started, mine);
                    } finally {
                        if (!mine.acquired) {
                            heldHere.remove(id, mine);
                            signals.signal(key); // callers here waiting for this claim's answer
                        }
                    }
                    if (step instanceof Step.Done<T> finished) {
                        return finished.value();
                    }
                    if (step instanceof Step.Replayed<T> replayed) {
                        return replay.apply(replayed.record());
                    }
                    Step.Blocked<T> blocked = (Step.Blocked<T>) step;
                    if (blocked.settled() && !joined && settledRetries++ < 3) {
                        continue; // the other transaction committed: a new one finds its row
                    }
                    retryAfter = blocked.retryAfter();
                    if (joined) {
                        // The caller's transaction may be broken by the failed statement, and cannot be retried here.
                        throw rejected(key, retryAfter);
                    }
                }
                long waitLeft = deadline - System.nanoTime();
                if (!policy.waitForResult() || waitLeft <= 0) {
                    throw rejected(key, retryAfter);
                }
                // No transaction and no connection held: woken by the first call's commit or rollback on this node,
                // by its completion on any node (the cache), or after a poll interval (a rollback elsewhere).
                subscription.await(min(Duration.ofNanos(waitLeft), max(policy.claimLockTimeout(), MIN_POLL)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IdempotencyException("Interrupted while waiting for the " + key, e);
            } finally {
                subscription.close();
            }
        }
    }

    /** A key this node claims (or holds, once {@code acquired}) in a transaction that has not completed. */
    private static final class LocalClaim {
        volatile boolean acquired;
    }

    /** The claim, inside a transaction: claimed (held until that transaction ends), replayed, or blocked. */
    private <T> Step<T> claimStep(ScopedKey key, String fingerprint, String requestType, Policy policy, Duration lockWait,
                                  long started, LocalClaim mine, boolean joined, TransactionBridge.Begun begun) {
        Instant now = clock.instant();
        long claimStarted = System.nanoTime();
        Claim claim = claimAtomically(new ClaimRequest(key, fingerprint, requestType, nodeId, now,
                now.plus(policy.lease()), now.plus(policy.ttl())), lockWait);
        if (claim instanceof Claim.Busy busy) {
            transactions.setRollbackOnly(); // the failed statement may have broken the transaction (PostgreSQL)
            return new Step.Blocked<>(busy.settled(), MIN_RETRY_AFTER);
        }
        if (claim instanceof Claim.Existing existing) {
            IdempotencyRecord record = existing.record();
            if (record.isFinished()) {
                cacheLoadedQuietly(record);
                Decision replay = finished(key, record, fingerprint, started, false);
                return new Step.Replayed<>(((Decision.Replay) replay).record());
            }
            if (!record.fingerprint().equals(fingerprint)) {
                throw reused(key);
            }
            // A leased claim in progress (a method that asks for leased claims shares this key).
            return new Step.Blocked<>(false, retryAfter(Duration.between(now, record.leaseUntil())));
        }
        Ticket ticket = ((Claim.Acquired) claim).ticket();
        observer.executed(key, Duration.ofNanos(System.nanoTime() - claimStarted), ticket.takeover());
        LOG.log(Level.FINE, "Claimed {0} in the transaction", key);
        AtomicHold hold = new AtomicHold(ticket, begun, joined);
        String id = key.cacheId();
        rememberInThisTransaction(key);
        transactions.afterCompletion(committed -> {
            heldHere.remove(id, mine);
            IdempotencyRecord record = hold.completed.get();
            if (committed && record != null) {
                finished(record);
            } else {
                signals.signal(key);
            }
            byte[] failure = hold.keptFailure.get();
            if (failure != null) {
                keepFailureAfterwards(key, fingerprint, requestType, policy, failure);
            }
        });
        mine.acquired = true;
        return new Step.Claimed<>(hold);
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
            if (hold.joined) {
                // The caller's transaction may still commit (a checked exception it catches): the claim goes now.
                unclaim(ticket);
            } else {
                transactions.setRollbackOnly();
            }
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
            if (hold.joined) {
                unclaim(ticket);
            } else {
                transactions.setRollbackOnly();
            }
            throw e;
        }
        writeAnswer(hold, response);
        return value;
    }

    /** The answer written into the held claim's row, in its transaction; cached and signalled once that commits. */
    private void writeAnswer(AtomicHold hold, byte[] response) {
        Ticket ticket = hold.ticket();
        Instant end = clock.instant();
        finish(ticket, new Completion(RecordStatus.COMPLETED, response, end, true), true);
        hold.completed.set(ticket.finished(RecordStatus.COMPLETED, response, end));
    }

    private Claim claimAtomically(ClaimRequest request, Duration lockWait) {
        return claim(request, () -> atomicClaims.claimInTransaction(request, lockWait));
    }

    private void unclaim(Ticket ticket) {
        try {
            atomicClaims.unclaimInTransaction(ticket);
            forgetInThisTransaction(ticket);
            observer.released(ticket.scopedKey());
        } catch (RuntimeException e) {
            observer.storeError(ticket.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "Could not undo the claim of " + ticket.scopedKey() + "; its transaction is marked for rollback", e);
            transactions.setRollbackOnly();
        }
    }

    /** A kept failure of an atomic call, stored once its transaction has ended: a leased claim and its completion. */
    private void keepFailureAfterwards(ScopedKey key, String fingerprint, String requestType, Policy policy, byte[] failure) {
        afterTransaction(() -> {
            Instant now = clock.instant();
            if (claim(new ClaimRequest(key, fingerprint, requestType, nodeId, now, now.plus(policy.lease()),
                    now.plus(policy.ttl()))) instanceof Claim.Acquired acquired) {
                fail(acquired.ticket(), failure);
            }
        }, "Could not keep the failure of " + key + "; a retry runs the operation again");
    }

    /** What one atomic attempt came to. */
    private sealed interface Step<T> {
        /** The answer of the whole call. */
        record Done<T>(T value) implements Step<T> {
        }

        /** A finished record: to be replayed (turned into the caller's answer by the loop's replay function). */
        record Replayed<T>(IdempotencyRecord record) implements Step<T> {
        }

        /** Claimed in the transaction: the caller now runs the operation. */
        record Claimed<T>(AtomicHold hold) implements Step<T> {
        }

        /** Another transaction holds the key; {@code settled}: it has committed, a new transaction sees it. */
        record Blocked<T>(boolean settled, Duration retryAfter) implements Step<T> {
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** The replay (or reuse rejection) of a finished, unexpired record in the cache; null when there is none. */
    private Decision fromCache(ScopedKey key, String fingerprint, long started) {
        IdempotencyRecord cached = cachedFinished(key);
        return cached == null ? null : finished(key, cached, fingerprint, started, true);
    }

    /** The finished, unexpired record the cache holds for the key; null when none, or when the cache fails. */
    IdempotencyRecord cachedFinished(ScopedKey key) {
        IdempotencyRecord cached;
        try {
            cached = cache.get(key).orElse(null);
        } catch (RuntimeException e) {
            // The cache may only ever spare the store a question: when it fails, the store answers.
            LOG.log(Level.WARNING, "Could not read the cache for " + key + "; asking the store", e);
            return null;
        }
        return cached != null && cached.isFinished() && !cached.isExpired(clock.instant()) ? cached : null;
    }

    private Decision finished(ScopedKey key, IdempotencyRecord record, String fingerprint, long started, boolean fromCache) {
        if (!record.fingerprint().equals(fingerprint)) {
            throw reused(key);
        }
        if (LOG.isLoggable(Level.FINE)) {
            LOG.log(Level.FINE, "Replaying {0} ({1}{2})", new Object[] {key, record.status(), fromCache ? ", from the cache" : ""});
        }
        observer.replayed(key, Duration.ofNanos(System.nanoTime() - started), fromCache);
        return new Decision.Replay(record);
    }

    private IdempotencyKeyReusedException reused(ScopedKey key) {
        LOG.log(Level.FINE, "Rejected {0}: reused for another request", key);
        observer.mismatch(key);
        return new IdempotencyKeyReusedException("The " + key
                + " was already used for a different request; use a new key for a new request");
    }

    /**
     * Stores the operation's response and finishes the record ({@code COMPLETED}). Inside an active
     * transaction the write joins it, and a rollback releases the key afterwards.
     *
     * @throws IdempotencyLeaseLostException the claim was taken over; an active transaction is marked for
     *                                       rollback
     */
    public void complete(Ticket ticket, byte[] response) {
        if (!transactions.isActive()) {
            completeOnItsOwn(ticket, response);
            return;
        }
        stopHeartbeat(ticket);
        Instant now = clock.instant();
        if (transactions.isRollbackOnly()) {
            // The operation's effects will roll back: nothing to remember, the retry must run.
            LOG.log(Level.FINE, "Releasing {0}: its transaction is marked for rollback", ticket.scopedKey());
            release(ticket);
            return;
        }
        // Registered before the write, so that a rollback after it (or of it) always releases the key.
        transactions.afterCompletion(committed -> {
            if (committed) {
                finished(ticket.finished(RecordStatus.COMPLETED, response, now));
            } else {
                releaseAfterRollback(ticket);
            }
        });
        finish(ticket, new Completion(RecordStatus.COMPLETED, response, now, true), true);
        LOG.log(Level.FINE, "Completed {0} with the transaction", ticket.scopedKey());
    }

    /**
     * Stores the response and finishes the record ({@code COMPLETED}) in a transaction of its own, whatever the
     * caller's: for a door whose response is the outcome itself ({@code IdempotencyManager.store}). Cached and
     * signalled at once.
     *
     * @return the finished record
     * @throws IdempotencyLeaseLostException the claim was taken over
     */
    public IdempotencyRecord completeOnItsOwn(Ticket ticket, byte[] response) {
        stopHeartbeat(ticket);
        Instant now = clock.instant();
        finish(ticket, new Completion(RecordStatus.COMPLETED, response, now, false), false);
        IdempotencyRecord record = ticket.finished(RecordStatus.COMPLETED, response, now);
        finished(record);
        LOG.log(Level.FINE, "Completed {0}", ticket.scopedKey());
        return record;
    }

    /**
     * Stores a failure the user asked to keep ({@code FAILED}); it is replayed to every retry. Written in a
     * transaction of its own: the failure is the outcome, whatever becomes of the caller's transaction.
     */
    public void fail(Ticket ticket, byte[] failure) {
        stopHeartbeat(ticket);
        forgetInThisTransaction(ticket); // written in a transaction of its own: a second call reads it
        Instant now = clock.instant();
        finish(ticket, new Completion(RecordStatus.FAILED, failure, now, false), false);
        finished(ticket.finished(RecordStatus.FAILED, failure, now));
        LOG.log(Level.FINE, "Kept the failure of {0}", ticket.scopedKey());
    }

    /** Frees the key (an outcome not to keep): the next request with it runs the operation again. */
    public void release(Ticket ticket) {
        stopHeartbeat(ticket);
        try {
            boolean released = store.release(ticket, clock.instant());
            forgetInThisTransaction(ticket);
            LOG.log(Level.FINE, released ? "Released {0}" : "Did not release {0}: no longer held", ticket.scopedKey());
            if (released) {
                observer.released(ticket.scopedKey());
            }
        } catch (RuntimeException e) {
            observer.storeError(ticket.scopedKey().namespace(), e);
            // The lease will expire and the key will be taken over: nothing is lost but time.
            LOG.log(Level.WARNING, "Could not release " + ticket.scopedKey() + "; it frees itself when its lease ends", e);
        } finally {
            evictQuietly(ticket.scopedKey());
            signals.signal(ticket.scopedKey());
        }
    }

    /** Throws when the caller's active transaction claimed this key already: a second claim would wait on its own row lock. */
    private void checkNotClaimedInThisTransaction(ScopedKey key) {
        java.util.Set<String> claims = transactions.claimsOfThisTransaction(false);
        if (claims != null && claims.contains(key.cacheId())) {
            LOG.log(Level.FINE, "Rejected {0}: already claimed in this transaction", key);
            throw new IdempotencyKeyClaimedInTransactionException("The " + key + " was already claimed in this transaction,"
                    + " by a call whose outcome it has not committed: one transaction cannot run the same idempotent"
                    + " operation twice; call it once per transaction, or give each call its own key");
        }
    }

    /** Notes a claim in the caller's active transaction (none: nothing to note). */
    private void rememberInThisTransaction(ScopedKey key) {
        java.util.Set<String> claims = transactions.claimsOfThisTransaction(true);
        if (claims != null) {
            claims.add(key.cacheId());
        }
    }

    /** The key is free again inside the caller's transaction (its claim released or undone there). */
    private void forgetInThisTransaction(Ticket ticket) {
        java.util.Set<String> claims = transactions.claimsOfThisTransaction(false);
        if (claims != null) {
            claims.remove(ticket.scopedKey().cacheId());
        }
    }

    /** Renews the ticket's lease every third of the lease while its operation runs (see {@link #renewLeasesWith}). */
    private void startHeartbeat(Ticket ticket, Duration lease) {
        java.util.concurrent.ScheduledExecutorService scheduler = renewals;
        if (scheduler == null) {
            return;
        }
        long period = Math.max(1, lease.toMillis() / 3);
        Instant until = min(clock.instant().plus(renewalLimit), ticket.expiresAt());
        try {
            heartbeats.put(ticket, scheduler.scheduleWithFixedDelay(() -> renew(ticket, lease, until), period, period, TimeUnit.MILLISECONDS));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.log(Level.WARNING, "Could not schedule the lease renewal of " + ticket.scopedKey()
                    + "; a call that outlives its lease may be taken over", e);
        }
    }

    private void stopHeartbeat(Ticket ticket) {
        java.util.concurrent.Future<?> heartbeat = heartbeats.remove(ticket);
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
    }

    /**
     * One heartbeat: the lease renewed, fenced; stops when the claim is lost or finished, or at {@code until} (the
     * renewal limit or the time to live).
     */
    private void renew(Ticket ticket, Duration lease, Instant until) {
        if (!heartbeats.containsKey(ticket)) {
            return;
        }
        Instant now = clock.instant();
        if (!now.isBefore(until)) {
            LOG.log(Level.WARNING, "Stopped renewing the lease of {0}: its call has run past idempotency.lease-renewal-limit"
                    + " or its time to live; it may be taken over when its lease ends", ticket.scopedKey());
            stopHeartbeat(ticket);
            return;
        }
        try {
            if (store.renew(ticket, min(now.plus(lease), ticket.expiresAt()))) {
                LOG.log(Level.FINEST, "Renewed the lease of {0}", ticket.scopedKey());
            } else if (heartbeats.containsKey(ticket)) {
                // Finished in the meantime (the completion won the race), or taken over after a missed renewal.
                LOG.log(Level.FINE, "Stopped renewing the lease of {0}: no longer held as claimed", ticket.scopedKey());
                stopHeartbeat(ticket);
            }
        } catch (UnsupportedOperationException e) {
            LOG.log(Level.FINE, "{0} does not renew leases", store.getClass().getName());
            stopHeartbeat(ticket);
        } catch (RuntimeException e) {
            // The next heartbeat tries again; two missed in a row and the lease may end.
            observer.storeError(ticket.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "Could not renew the lease of " + ticket.scopedKey() + "; trying again in a third of the lease", e);
        }
    }

    /**
     * The finished, unexpired record of a key, if there is one: from the cache, else from the store (and then
     * cached, unless a release or a deletion evicted the key meanwhile). Nothing is claimed.
     */
    public java.util.Optional<IdempotencyRecord> lookup(ScopedKey key) {
        IdempotencyRecord cached = cachedFinished(key);
        if (cached != null) {
            return java.util.Optional.of(cached);
        }
        Instant now = clock.instant();
        java.util.Optional<IdempotencyRecord> found;
        try {
            found = store.find(key).filter(r -> r.isFinished() && !r.isExpired(now));
        } catch (IdempotencyException e) {
            observer.storeError(key.namespace(), e);
            throw e;
        } catch (RuntimeException e) {
            observer.storeError(key.namespace(), e);
            throw new IdempotencyStoreException("Could not read the " + key, e);
        }
        found.ifPresent(this::cacheLoadedQuietly);
        return found;
    }

    /**
     * Waits until the key has a finished record, finished on any node (woken by its completion, not by polling),
     * up to the timeout; empty at the timeout or when interrupted (the interrupt is kept).
     */
    public java.util.Optional<IdempotencyRecord> await(ScopedKey key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            // Subscribed before the look-up, so that a completion in between is not missed.
            try (CompletionSignals.Subscription s = signals.subscribe(key)) {
                java.util.Optional<IdempotencyRecord> r = lookup(key);
                long left = deadline - System.nanoTime();
                if (r.isPresent() || left <= 0) {
                    return r;
                }
                s.await(unwoken(Duration.ofNanos(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return java.util.Optional.empty();
            }
        }
    }

    /** A wait, cut to the cache's {@link RecordCache#lookAgainAfter()} where its wake-ups can be lost. */
    private Duration unwoken(Duration wait) {
        Duration atMost;
        try {
            atMost = cache.lookAgainAfter();
        } catch (RuntimeException e) {
            atMost = MIN_POLL.multipliedBy(20);
        }
        return atMost == null ? wait : min(wait, atMost);
    }

    /** How many leased claims this node is renewing now. */
    public int heartbeats() {
        return heartbeats.size();
    }

    /** A finished record, committed: into the cache (on every node), and its waiters woken. */
    private void finished(IdempotencyRecord record) {
        cacheQuietly(record);
        List<FinishWatch> watching = finishWatches.remove(record.scopedKey().cacheId());
        if (watching != null) {
            watching.forEach(w -> w.call(record));
        }
        signals.signal(record.scopedKey());
    }

    // ------------------------------------------------------------------ the programmatic door's operations

    /**
     * A sighting of an id ({@code IdempotencyManager.check}, SPEC M1): whether it was seen before (by any node),
     * when it was last seen, and "seen now" recorded. Stored state: the first sighting claims a record in the store,
     * later ones move its {@code lastSeen}; a known id is answered from the cache with no SQL, the store learning
     * the sighting behind ({@link #recordSightingsWith}). Observed as an execution (first) or a replay (later).
     *
     * @param policy the time to live of the id's record, and the lease of its first sighting's claim
     */
    public Sighting sight(ScopedKey id, String requestType, Policy policy) {
        return sightings.sight(id, requestType, policy);
    }

    /** Remembers with the id's cached sighting that a door noted it ({@link Sighting#noted()}); nothing is stored. */
    public void noteSighting(ScopedKey id) {
        sightings.note(id);
    }

    /**
     * How sightings answered from the cache reach the store: in one batch every {@code flushEvery} on the scheduler
     * ({@code null}: each at once; a running schedule stops and what is queued is written now, as at shutdown); and
     * how long a sighting is trusted in the cache at most ({@code null}: its record's life; a cache of each node's
     * own should bound it, since other nodes' sightings reach only the store).
     */
    public void recordSightingsWith(java.util.concurrent.ScheduledExecutorService scheduler, Duration flushEvery, Duration cachedAtMost) {
        sightings.start(scheduler, flushEvery, cachedAtMost);
    }

    /** Writes the sightings the store has not recorded yet (as the schedule does). */
    public void flushSightings() {
        sightings.flush();
    }

    /**
     * Calls back once when the key has a finished record: at once, on this thread, when it has one already;
     * else on the thread that finished it here, or that received the news from another node (keep it quick).
     * With no cache, only completions on this node call back.
     */
    public void whenFinished(ScopedKey key, java.util.function.Consumer<IdempotencyRecord> callback) {
        FinishWatch watch = new FinishWatch(key, callback);
        // Registered before the look-up, so that a completion in between is not missed.
        finishWatches.computeIfAbsent(key.cacheId(), k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(watch);
        lookup(key).ifPresent(r -> {
            unwatch(watch);
            watch.call(r);
        });
    }

    /** A signal, from here or another node: a watched key finished elsewhere is in the cache by now. */
    private void signalled(String cacheId) {
        List<FinishWatch> watching = finishWatches.get(cacheId);
        if (watching == null || watching.isEmpty()) {
            return;
        }
        IdempotencyRecord record = cachedFinished(watching.get(0).key());
        if (record != null) { // else released, deleted, or not cached: they keep watching
            watching.forEach(w -> {
                unwatch(w);
                w.call(record);
            });
        }
    }

    private void unwatch(FinishWatch watch) {
        finishWatches.computeIfPresent(watch.key().cacheId(), (k, l) -> {
            l.remove(watch);
            return l.isEmpty() ? null : l;
        });
    }

    /** One {@link #whenFinished} callback, called once. */
    private record FinishWatch(ScopedKey key, java.util.function.Consumer<IdempotencyRecord> callback,
                               java.util.concurrent.atomic.AtomicBoolean called) {
        FinishWatch(ScopedKey key, java.util.function.Consumer<IdempotencyRecord> callback) {
            this(key, callback, new java.util.concurrent.atomic.AtomicBoolean());
        }

        void call(IdempotencyRecord record) {
            if (called.compareAndSet(false, true)) {
                try {
                    callback.accept(record);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "A listener of " + key + " failed", e);
                }
            }
        }
    }

    /** The finished record of a key if the cache holds it (no store is asked). */
    public java.util.Optional<IdempotencyRecord> cached(ScopedKey key) {
        return java.util.Optional.ofNullable(cachedFinished(key));
    }

    /**
     * Empties the cache (on every node when it is clustered); the store keeps every record, and first learns the
     * sightings the cache held ({@link #flushSightings}).
     */
    public void flushCache() {
        try {
            sightings.flush();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not record the last sightings before emptying the cache; they are lost", e);
        }
        cache.clear();
    }

    /**
     * Deletes records through the store's management capability, in batches of {@code batchSize}, never a live
     * claim; each deleted key leaves the cache. Returns how many it deleted.
     *
     * @throws UnsupportedOperationException when the store has no management capability
     */
    public int delete(dev.idempotency.spi.Deletion which, int batchSize) {
        return management("delete records").delete(which, clock.instant(), batchSize, cache::remove);
    }

    /** Writes records as they are (an import): replaces records with the same keys; the cache is emptied. */
    public void importAll(List<IdempotencyRecord> records) {
        management("import records").importAll(records);
        cache.clear();
    }

    /** Every record, for an export. */
    public List<IdempotencyRecord> all() {
        return management("export its records").all();
    }

    /** The store's management capability, or a clear refusal naming the store. */
    private dev.idempotency.spi.StoreManagement management(String what) {
        if (store instanceof dev.idempotency.spi.StoreManagement management) {
            return management;
        }
        throw new UnsupportedOperationException(store.getClass().getName() + " cannot " + what
                + ": it does not implement dev.idempotency.spi.StoreManagement");
    }

    RecordCache cache() {
        return cache;
    }

    boolean hasCache() {
        return cache != RecordCache.NONE;
    }

    /** Into the cache; a cache failure never turns an answer into an error (duplicates then ask the store). */
    private void cacheQuietly(IdempotencyRecord record) {
        try {
            cache.put(record);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache the finished " + record.scopedKey() + "; duplicates will ask the store", e);
        }
    }

    /** A finished record read from the store into the cache, unless a release or a deletion evicted it since. */
    private void cacheLoadedQuietly(IdempotencyRecord record) {
        try {
            cache.putLoaded(record);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache the finished " + record.scopedKey() + "; duplicates will ask the store", e);
        }
    }

    private void evictQuietly(ScopedKey key) {
        try {
            cache.evict(key);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not evict " + key + " from the cache", e);
        }
    }

    private void finish(Ticket ticket, Completion completion, boolean joined) {
        long started = System.nanoTime();
        try {
            store.complete(ticket, completion);
            observer.completed(ticket.scopedKey(), Duration.ofNanos(System.nanoTime() - started),
                    completion.status() == RecordStatus.FAILED);
        } catch (IdempotencyLeaseLostException e) {
            if (joined) {
                transactions.setRollbackOnly();
            }
            LOG.log(Level.WARNING, "Refused the completion of {0}: its lease was taken over", ticket.scopedKey());
            throw e;
        } catch (IdempotencyException e) {
            if (e instanceof IdempotencyStoreException) {
                observer.storeError(ticket.scopedKey().namespace(), e);
            }
            throw e;
        } catch (RuntimeException e) {
            observer.storeError(ticket.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "The store failed to store the outcome of the {0}: {1}", new Object[] {ticket.scopedKey(), e.toString()});
            throw new IdempotencyStoreException("Could not store the outcome of the " + ticket.scopedKey(), e);
        }
    }

    private void releaseAfterRollback(Ticket ticket) {
        afterTransaction(() -> release(ticket), "Could not release " + ticket.scopedKey() + " after its transaction rolled back");
    }

    /**
     * Store work after a transaction completed, which may still be bound to this thread: on a clean thread,
     * waited for (bounded), so that the caller's retry sees it.
     */
    private void afterTransaction(Runnable work, String failure) {
        CompletableFuture<Void> done = CompletableFuture.runAsync(work, afterCompletionExecutor);
        try {
            done.get(afterCompletionTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.log(Level.WARNING, failure, e);
        }
    }

    private Claim claim(ClaimRequest request) {
        return claim(request, () -> store.claim(request));
    }

    /** A claim, with store failures counted, logged and turned into {@link IdempotencyStoreException}. */
    private Claim claim(ClaimRequest request, java.util.function.Supplier<Claim> claim) {
        try {
            return claim.get();
        } catch (IdempotencyException e) {
            if (e instanceof IdempotencyStoreException) {
                observer.storeError(request.scopedKey().namespace(), e);
                LOG.log(Level.WARNING, "The store failed to claim the {0}: {1}", new Object[] {request.scopedKey(), e.getMessage()});
            }
            throw e;
        } catch (RuntimeException e) {
            observer.storeError(request.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "The store failed to claim the {0}: {1}", new Object[] {request.scopedKey(), e.toString()});
            throw new IdempotencyStoreException("Could not claim the " + request.scopedKey(), e);
        }
    }

    /** A duplicate turned away while the first call runs: logged, counted, and the exception to throw. */
    private IdempotencyInProgressException rejected(ScopedKey key, Duration leaseLeft) {
        LOG.log(Level.FINE, "Rejected {0}: in progress", key);
        observer.conflict(key);
        return inProgress(key, leaseLeft);
    }

    /** Retry after the rest of the lease, in whole seconds, at least 1 and at most 5: most calls end well before. */
    private static IdempotencyInProgressException inProgress(ScopedKey key, Duration leaseLeft) {
        Duration retryAfter = retryAfter(leaseLeft);
        return new IdempotencyInProgressException("A request with the " + key
                + " is still in progress; retry after " + retryAfter.toSeconds() + " s", retryAfter);
    }

    private static Duration retryAfter(Duration leaseLeft) {
        Duration rounded = Duration.ofSeconds(leaseLeft.toSeconds() + (leaseLeft.toNanosPart() > 0 ? 1 : 0));
        return rounded.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER
                : rounded.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : rounded;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
