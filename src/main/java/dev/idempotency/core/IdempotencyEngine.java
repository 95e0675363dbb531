package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
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
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.CompletableFuture;
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

    private final IdempotencyStore store;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final CompletionSignals signals;
    private final Executor afterCompletionExecutor;
    private final Duration afterCompletionTimeout;
    private final RecordCache cache;
    private volatile EngineObserver observer = EngineObserver.NONE;

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
                    observer.executed(key, Duration.ofNanos(System.nanoTime() - claimStarted), ticket.takeover());
                    if (ticket.takeover()) {
                        LOG.log(Level.WARNING, "Took over {0} from a holder whose lease expired (attempt {1})",
                                new Object[] {key, ticket.attempts()});
                    } else {
                        LOG.log(Level.FINE, "Claimed {0}", key);
                    }
                    return new Decision.Proceed(ticket);
                }
                IdempotencyRecord record = ((Claim.Existing) claim).record();
                if (record.isFinished()) {
                    cache.put(record); // a node that joined late, or a cache that was flushed, learns it here
                    return finished(key, record, fingerprint, started, false);
                }
                if (!record.fingerprint().equals(fingerprint)) {
                    throw reused(key);
                }
                Duration leaseLeft = Duration.between(now, record.leaseUntil());
                long waitLeft = deadline - System.nanoTime();
                if (subscription == null || waitLeft <= 0) {
                    LOG.log(Level.FINE, "Rejected {0}: in progress", key);
                    observer.conflict(key);
                    throw inProgress(key, leaseLeft);
                }
                // Woken by the first call's completion or release, or at its lease end (take-over).
                subscription.await(min(Duration.ofNanos(waitLeft), leaseLeft.plusMillis(1)));
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

    /** The replay (or reuse rejection) of a finished, unexpired record in the cache; null when there is none. */
    private Decision fromCache(ScopedKey key, String fingerprint, long started) {
        IdempotencyRecord cached = cache.get(key).orElse(null);
        if (cached != null && cached.isFinished() && !cached.isExpired(clock.instant())) {
            return finished(key, cached, fingerprint, started, true);
        }
        return null;
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
        Instant now = clock.instant();
        if (!transactions.isActive()) {
            finish(ticket, new Completion(RecordStatus.COMPLETED, response, now, false), false);
            finished(ticket.finished(RecordStatus.COMPLETED, response, now));
            LOG.log(Level.FINE, "Completed {0}", ticket.scopedKey());
            return;
        }
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
     * Stores a failure the user asked to keep ({@code FAILED}); it is replayed to every retry. Written in a
     * transaction of its own: the failure is the outcome, whatever becomes of the caller's transaction.
     */
    public void fail(Ticket ticket, byte[] failure) {
        Instant now = clock.instant();
        finish(ticket, new Completion(RecordStatus.FAILED, failure, now, false), false);
        finished(ticket.finished(RecordStatus.FAILED, failure, now));
        LOG.log(Level.FINE, "Kept the failure of {0}", ticket.scopedKey());
    }

    /** Frees the key (an outcome not to keep): the next request with it runs the operation again. */
    public void release(Ticket ticket) {
        try {
            boolean released = store.release(ticket, clock.instant());
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

    /** A finished record, committed: into the cache (on every node), and its waiters woken. */
    private void finished(IdempotencyRecord record) {
        try {
            cache.put(record);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache the finished " + record.scopedKey() + "; duplicates will ask the store", e);
        }
        signals.signal(record.scopedKey());
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
        // The transaction has ended but may still be bound to this thread; release from a clean one.
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> release(ticket), afterCompletionExecutor);
        try {
            done.get(afterCompletionTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.log(Level.WARNING, "Could not release " + ticket.scopedKey() + " after its transaction rolled back", e);
        }
    }

    private Claim claim(ClaimRequest request) {
        try {
            return store.claim(request);
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

    /** Retry after the rest of the lease, in whole seconds, at least 1 and at most 5: most calls end well before. */
    private static IdempotencyInProgressException inProgress(ScopedKey key, Duration leaseLeft) {
        Duration rounded = Duration.ofSeconds(leaseLeft.toSeconds() + (leaseLeft.toNanosPart() > 0 ? 1 : 0));
        Duration retryAfter = rounded.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER
                : rounded.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : rounded;
        return new IdempotencyInProgressException("A request with the " + key
                + " is still in progress; retry after " + retryAfter.toSeconds() + " s", retryAfter);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
