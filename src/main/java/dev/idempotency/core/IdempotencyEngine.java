package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one engine behind every entry point: the states a key goes through ("The life of a key" in
 * CONTRIBUTING.md).
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
 *
 * <p>A facade: the atomic claim is {@link AtomicFlow}'s, the leased claim {@link LeasedFlow}'s; lease renewals, the
 * watchers of finished keys, the keys of a transaction, the store calls, the cache and the replies are rooms of their own.
 *
 * <p>Over 400 lines on purpose: it is the facade, one short method per engine operation, each handing over to a room of
 * its own (the flows, the store calls, the completions, the sightings); its length is its API's.
 */
public final class IdempotencyEngine {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final IdempotencyStore store;
    private final Clock clock;
    private final String nodeId;
    private final TransactionBridge transactions;
    private final CompletionSignals signals;
    private final QuietCache cache;
    private volatile EngineObserver observer = EngineObserver.NONE;
    private final LeaseHeartbeats heartbeats;
    private final Completions completions;
    private final LeasedFlow leased;
    private final AtomicFlow atomic;
    private final OptimisticFlow optimistic;
    private final StoreCalls calls;
    /** "Seen" and "last seen" of ids ({@link #sight}). */
    private final Sightings sightings = new Sightings(this);

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
        this.store = Objects.requireNonNull(store, "store");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.signals = Objects.requireNonNull(signals, "signals");
        this.cache = new QuietCache(Objects.requireNonNull(cache, "cache"), clock);
        java.util.function.Supplier<EngineObserver> observed = () -> observer;
        this.calls = new StoreCalls(store, transactions, observed);
        Replies replies = new Replies(observed);
        TransactionKeys keys = new TransactionKeys(transactions);
        this.completions = new Completions(this.cache, signals);
        this.heartbeats = new LeaseHeartbeats(store, clock, observed);
        this.leased = new LeasedFlow(store, clock, nodeId, transactions, signals,
                Objects.requireNonNull(afterCompletionExecutor, "afterCompletionExecutor"),
                Objects.requireNonNull(afterCompletionTimeout, "afterCompletionTimeout"), this.cache, calls, replies, keys,
                completions, heartbeats, observed);
        this.atomic = new AtomicFlow(store, clock, nodeId, transactions, signals, this.cache, calls, replies, keys, completions,
                leased, observed);
        this.optimistic = new OptimisticFlow(store, clock, nodeId, transactions, signals, this.cache, calls, replies, keys,
                completions, leased, observed);
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
     * Looks at the keys {@link #whenFinished} watches again, as often as a waiter looks at the store when the cache's
     * wake-ups can be lost ({@link RecordCache#lookAgainAfter()}; a second with no cache): the scheduler ticks, the
     * reads run on {@code executor} (never on the scheduler's thread, which renews leases), one round at a time.
     *
     * @param scheduler {@code null}: stops
     */
    public void lookAgainForWatchersWith(java.util.concurrent.ScheduledExecutorService scheduler, Executor executor) {
        completions.lookAgainWith(scheduler, executor, cache.unwoken(WATCH_LOOK_AGAIN), this::lookup);
    }

    /** How often watched keys are looked at again when the cache's wake-ups are never lost (a cache of no bound). */
    private static final Duration WATCH_LOOK_AGAIN = Duration.ofSeconds(30);

    /**
     * Renews the lease of every leased claim this node holds while its operation runs: every third of
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
        heartbeats.renewWith(scheduler, Objects.requireNonNull(limit, "limit"));
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

    // ----------------------------------------------------------------------------------------- leased claims

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
        return leased.begin(key, fingerprint, requestType, policy);
    }

    /**
     * Stores the operation's response and finishes the record ({@code COMPLETED}). Inside an active
     * transaction the write joins it, and a rollback releases the key afterwards.
     *
     * @throws IdempotencyLeaseLostException the claim was taken over; an active transaction is marked for
     *                                       rollback
     */
    public void complete(Ticket ticket, byte[] response) {
        leased.complete(ticket, response);
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
        return leased.completeOnItsOwn(ticket, response);
    }

    /**
     * Stores a failure the user asked to keep ({@code FAILED}); it is replayed to every retry. Written in a
     * transaction of its own: the failure is the outcome, whatever becomes of the caller's transaction.
     */
    public void fail(Ticket ticket, byte[] failure) {
        leased.fail(ticket, failure);
    }

    /** Frees the key (an outcome not to keep): the next request with it runs the operation again. */
    public void release(Ticket ticket) {
        leased.release(ticket);
    }

    // ----------------------------------------------------------------------------------------- atomic claims

    /**
     * The flow of a method's calls: atomic ({@link #supportsAtomicClaims()} must hold) or leased. Chosen once, when the
     * application starts; a door then never asks which it is.
     */
    public ClaimFlow flow(boolean atomic) {
        return atomic ? this.atomic : leased;
    }

    /**
     * The flow of a claim mode: {@link dev.idempotency.ClaimMode#ATOMIC} and {@link dev.idempotency.ClaimMode#OPTIMISTIC}
     * need {@link #supportsAtomicClaims()}; {@link dev.idempotency.ClaimMode#DEFAULT} is chosen before this is asked.
     */
    public ClaimFlow flow(dev.idempotency.ClaimMode mode) {
        return switch (mode) {
            case ATOMIC -> atomic;
            case OPTIMISTIC -> optimistic;
            case LEASED -> leased;
            case DEFAULT -> throw new IllegalArgumentException("a claim mode is chosen before its flow is asked for");
        };
    }

    /**
     * Whether {@link #runAtomic} can work here: the store writes claims inside transactions and a transaction
     * can be begun when the caller has none.
     */
    public boolean supportsAtomicClaims() {
        return store instanceof dev.idempotency.spi.AtomicClaims && transactions.canBegin();
    }

    /** As {@link #supportsAtomicClaims()}, and, when {@code onThread}, {@link ClaimFlow#hold} can begin a transaction on this thread too. */
    public boolean supportsAtomicClaims(boolean onThread) {
        return supportsAtomicClaims() && (!onThread || transactions.canBeginOnThread());
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
     * @throws IdempotencyStoreException      the store failed; the operation did not run
     * @throws Exception                      what the operation threw
     */
    public <R> AtomicOutcome<R> runAtomic(ScopedKey key, String fingerprint, String requestType, Policy policy,
                                          AtomicCall<R> call) throws Exception {
        return atomic.runAtomic(key, fingerprint, requestType, policy, call);
    }

    // ----------------------------------------------------------------------------------------- reads and waits

    /**
     * The finished, unexpired record of a key, if there is one: from the cache, else from the store (and then
     * cached, unless a release or a deletion evicted the key meanwhile). Nothing is claimed.
     */
    public java.util.Optional<IdempotencyRecord> lookup(ScopedKey key) {
        IdempotencyRecord cached = cache.finished(key);
        if (cached != null) {
            return java.util.Optional.of(cached);
        }
        Instant now = clock.instant();
        java.util.Optional<IdempotencyRecord> found = calls.call(key, "Could not read the ",
                () -> store.find(key).filter(r -> r.isFinished() && !r.isExpired(now)));
        found.ifPresent(r -> cache.putLoaded(r, now));
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
                s.await(cache.unwoken(Duration.ofNanos(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return java.util.Optional.empty();
            }
        }
    }

    /** How many leased claims this node is renewing now. */
    public int heartbeats() {
        return heartbeats.count();
    }

    /**
     * Calls back once when the key has a finished record: at once, on this thread, when it has one already;
     * else on the thread that finished it here, or that received the news from another node (keep it quick), or, once
     * {@link #lookAgainForWatchersWith} runs, on its scheduler's thread when it finds the record in the store (a
     * completion on another node whose news did not reach this one: no cache shared with it, or a cache that failed).
     */
    public void whenFinished(ScopedKey key, java.util.function.Consumer<IdempotencyRecord> callback) {
        completions.whenFinished(key, callback, this::lookup);
    }

    /** The finished record of a key if the cache holds it (no store is asked). */
    public java.util.Optional<IdempotencyRecord> cached(ScopedKey key) {
        return java.util.Optional.ofNullable(cache.finished(key));
    }

    /** The finished, unexpired record the cache holds for the key; null when none, or when the cache fails. */
    IdempotencyRecord cachedFinished(ScopedKey key) {
        return cache.finished(key);
    }

    RecordCache cache() {
        return cache.cache();
    }

    /** The one wrapper of the engine's store calls. */
    StoreCalls calls() {
        return calls;
    }

    boolean hasCache() {
        return cache.exists();
    }

    // ------------------------------------------------------------------ the programmatic door's operations

    /**
     * A sighting of an id ({@code IdempotencyManager.check}): whether it was seen before (by any node),
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
     * Empties the cache (on every node when it is clustered); the store keeps every record, and first learns the
     * sightings the cache held ({@link #flushSightings}).
     */
    public void flushCache() {
        try {
            sightings.flush();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not record the last sightings before emptying the cache; they are lost", e);
        }
        cache.cache().clear();
    }

    /**
     * Deletes records through the store's management capability, in batches of {@code batchSize}, never a live
     * claim; each deleted key leaves the cache. Returns how many it deleted.
     *
     * @throws UnsupportedOperationException when the store has no management capability
     */
    public int delete(dev.idempotency.spi.Deletion which, int batchSize) {
        // Each record's tombstone before its row goes (a cache shared with other nodes that cannot take it keeps the record),
        // and again once its batch has committed: a tombstone outlived by a long batch, or met by a completion that
        // finished between the two, would otherwise let the deleted record be cached again.
        java.util.concurrent.atomic.AtomicInteger deleted = new java.util.concurrent.atomic.AtomicInteger();
        RecordCache c = cache.cache();
        try {
            return management("delete records").delete(which, clock.instant(), batchSize, c::removeBeforeDeleting, key -> {
                deleted.incrementAndGet();
                c.remove(key);
            });
        } catch (RuntimeException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof dev.idempotency.IdempotencyCacheException refused) {
                    // the records of earlier batches are deleted; this one's and the rest are not
                    throw new dev.idempotency.IdempotencyCacheException(refused.getMessage() + " (" + deleted.get()
                            + " records were deleted before it; none after)", refused.getCause());
                }
            }
            throw e;
        }
    }

    /**
     * Writes finished records as they are (an import): replaces records with the same keys, never a claim whose lease is
     * alive (nothing is written then), never a finished record completed later than the imported one or at the same
     * instant; the cache is
     * emptied. Not written: a claim in the records (a call that was running when they were exported: it has finished or
     * given up since, and its key holds what came of it, a kept answer that the stale claim would replace, letting the
     * work run again, or nothing), and a record already expired (its key is new again; written, it would replace the
     * answer of the key's present life).
     *
     * @throws dev.idempotency.spi.StoreManagement.LiveClaimException a record's key is claimed by a call still running
     */
    public void importAll(List<IdempotencyRecord> records) {
        importEach(records);
    }

    /**
     * As {@link #importAll}, the records read one at a time as they are written (an import of any size).
     *
     * @return how many records were handed to the store: the finished ones not expired
     */
    public int importEach(Iterable<IdempotencyRecord> records) {
        Instant now = clock.instant();
        java.util.concurrent.atomic.AtomicInteger written = new java.util.concurrent.atomic.AtomicInteger();
        Iterable<IdempotencyRecord> finishedAndLive = () -> java.util.stream.StreamSupport.stream(records.spliterator(), false)
                .filter(r -> r.isFinished() && !r.isExpired(now)).peek(r -> written.incrementAndGet()).iterator();
        management("import records").importEach(finishedAndLive, now);
        cache.cache().clear();
        return written.get();
    }

    /** Every record, oldest first, one at a time (an export of any size). */
    public void forEachRecord(java.util.function.Consumer<IdempotencyRecord> each) {
        management("export its records").forEach(each);
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
}
