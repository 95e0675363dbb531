package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.cache.LocalRecordCache;
import dev.idempotency.contract.FirstAnswerContract.CacheKind;
import dev.idempotency.contract.FirstAnswerContract.Door;
import dev.idempotency.contract.FirstAnswerContract.Outcome;
import dev.idempotency.core.AtomicCall;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.Claimed;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;

import jakarta.transaction.RollbackException;
import jakarta.transaction.Status;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import dev.idempotency.cache.ClusterRecordCache;

/**
 * Two nodes (engines) over one database, one claim mode, one door, one cache state, and what the schedule has seen so far.
 *
 * <p>The invariants, after every step, for every key of this schedule:
 * <ol type="a">
 * <li>at most one execution of the key commits its work (one {@code OK} row) per lifetime of its record;</li>
 * <li>every success answered for the key, run or replayed, is the one the store keeps;</li>
 * <li>a success the store keeps is one whose work committed (its row is there);</li>
 * <li>once the key's answer is kept, a retry of the same request is answered with it, without running the work (never
 *     "in progress", never a second run), and another request with the key is refused as reused;</li>
 * <li>nothing is left open: no transaction on the caller's thread, no connection out of the pool, no lease heartbeat.</li>
 * </ol>
 */
final class World implements AutoCloseable {

    /** A duplicate is answered "in progress" at once. */
    static final Policy REJECT = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO, Duration.ofSeconds(1));
    /** A duplicate waits for the first call's answer (up to 20 s), then replays it. */
    static final Policy WAIT = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), true, Duration.ofSeconds(20), Duration.ofSeconds(1));

    final JtaEnvironment env;
    final String prefix;
    final ClaimMode mode;
    final Door door;
    final CacheKind cacheKind;
    final FakeClock clock = new FakeClock(Instant.now());
    private final BiFunction<java.time.Clock, LocalCompletionSignals, RecordCache> sharedCache;
    private final Node[] nodes = new Node[2];
    /** Nodes started so far (each Weld container gets an id of its own). */
    private int started;
    private final ExecutorService afterCompletion = Executors.newCachedThreadPool(daemon("after-completion"));
    private final ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(daemon("heartbeats"));
    private final ExecutorService racers = Executors.newCachedThreadPool(daemon("racer"));
    private final AtomicInteger executions = new AtomicInteger();
    /** Executions of each key so far (any outcome, committed or not). */
    private final Map<String, AtomicInteger> runs = new HashMap<>();
    /** The request each execution ran for, by its number. */
    private final Map<String, String> requestOfRun = new java.util.concurrent.ConcurrentHashMap<>();
    /** The successes answered for each key in its record's present lifetime. */
    private final Map<String, Set<String>> answered = new HashMap<>();
    /** Bumped when the clock passes the records' time to live: the keys are new again. */
    private int epoch;
    final List<String> steps = new ArrayList<>();
    /** How the methods of this world treat a duplicate that arrives while the first call runs. */
    Policy policy = REJECT;
    /** Run after every step, when a schedule is written by hand (jqwik runs the invariants of a generated one). */
    private java.util.function.Consumer<World> afterEveryStep = w -> {
    };

    private final Stack stack;

    /** Counted down by a call that holds its claim past the statement bound, once it holds it. */
    private volatile CountDownLatch holding;

    /** The world's store: the stack's, or one whose statements are bounded by {@link Stack#STATEMENT_BOUND}. */
    final dev.idempotency.spi.IdempotencyStore store;

    World(Stack stack, String prefix, ClaimMode mode, Door door, CacheKind cacheKind,
          BiFunction<java.time.Clock, LocalCompletionSignals, RecordCache> sharedCache, dev.idempotency.spi.IdempotencyStore store) {
        this.stack = stack;
        this.env = stack.env;
        this.store = store;
        this.prefix = prefix;
        this.mode = mode;
        this.door = door;
        this.cacheKind = cacheKind;
        this.sharedCache = sharedCache;
        ContractApplication.store = store;
        ContractApplication.clock = clock;
        nodes[0] = node(0);
        nodes[1] = door.singleNode() ? nodes[0] : node(1);
    }

    private Node node(int i) {
        started++;
        if (door == Door.HTTP_FILTER) {
            return new HttpNode();
        }
        if (door.cdi) {
            return new WeldNode(i);
        }
        LocalCompletionSignals signals = new LocalCompletionSignals();
        RecordCache cache = cache(signals);
        return new EngineNode(engine(i, signals, cache), cache);
    }

    /** The node a step names (a world of one node has it under both numbers). */
    private Node at(int node) {
        return nodes[door.singleNode() ? 0 : node];
    }

    private RecordCache cache(LocalCompletionSignals signals) {
        return switch (cacheKind) {
            case NONE -> RecordCache.NONE;
            case PER_NODE -> new LocalRecordCache(10_000, clock, signals);
            case SHARED -> sharedCache.apply(clock, signals); // its writes wake this node's waiters, on either node
        };
    }

    private IdempotencyEngine engine(int i, LocalCompletionSignals signals, RecordCache cache) {
        // As in a server: transactions joined, begun around a call, and begun on the request's thread (the HTTP door).
        dev.idempotency.jta.JtaTransactionBridge bridge = new dev.idempotency.jta.JtaTransactionBridge(env.tsr,
                new dev.idempotency.jta.TransactionManagerRequiresNew(env.tm), com.arjuna.ats.jta.UserTransaction.userTransaction());
        IdempotencyEngine engine = new IdempotencyEngine(store, clock, prefix + "-node-" + i, bridge, signals,
                afterCompletion, Duration.ofSeconds(10), cache);
        engine.renewLeasesWith(heartbeats, Duration.ofMinutes(1));
        return engine;
    }

    /** The outcomes a call can have through this door in this mode. */
    List<Outcome> outcomes() {
        EnumSet<Outcome> o = EnumSet.of(Outcome.OK, Outcome.THROWS_KEPT, Outcome.THROWS_RELEASED);
        if (transactional()) {
            o.add(Outcome.ROLLBACK_ONLY);
        }
        if (door == Door.RECORD) {
            // a bean the consumer calls acknowledges the record in a transaction of its own
            o.add(Outcome.NESTED_ACK_COMMITS);
            o.add(Outcome.NESTED_ACK_ROLLS_BACK);
            if (transactional()) {
                o.add(Outcome.NESTED_ACK_COMMITS_THEN_ROLLBACK_ONLY);
            }
        } else {
            // a bean the work calls writes a row in a transaction of its own (REQUIRES_NEW)
            o.add(Outcome.NESTED_COMMITS);
            o.add(Outcome.NESTED_ROLLS_BACK);
            if (transactional()) {
                o.add(Outcome.NESTED_COMMITS_THEN_ROLLBACK_ONLY);
            }
        }
        if (door.callersTransaction) {
            o.add(Outcome.CALLER_ROLLS_BACK);
            if (mode == ClaimMode.LEASED) {
                // Atomic and optimistic calls are left out for now: with this test stack (Agroal outside a server), a
                // transaction rolled back from the reaper's thread leaves the claim's insert in place, which a server's
                // pool does not (its connections refuse a dead transaction's statements); to be settled in a server.
                o.add(Outcome.CALLERS_TRANSACTION_TIMES_OUT);
            }
        }
        if (door.http() && mode != ClaimMode.LEASED) {
            o.add(Outcome.WRITER_FAILS);
        }
        if (door == Door.HTTP_FILTER) {
            // the resource's answer outgrows the filter's size cap (the world's idempotency.max-response-size)
            o.add(Outcome.ANSWERS_OVER_THE_CAP);
            if (transactional()) {
                o.add(Outcome.ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY);
            }
        }
        return new ArrayList<>(o);
    }

    // ------------------------------------------------------------------------------------------------ steps

    void afterEveryStep(java.util.function.Consumer<World> check) {
        this.afterEveryStep = check;
    }

    /** Whether the work runs in a transaction: the library's (atomic, optimistic) or the caller's. The manager's never does. */
    boolean transactional() {
        return door != Door.MANAGER && (mode != ClaimMode.LEASED || door.callersTransaction);
    }

    void flush(int node) {
        steps.add("flush " + node);
        disturbed.addAll(sightings.keySet());
        at(node).flush();
        afterEveryStep.accept(this);
    }

    /**
     * The shared cache's other members stop answering (a partition before failure detection: every call fails as a
     * timed out one does), or answer again. Nothing happens to the other caches.
     */
    void cut(boolean cut) {
        steps.add(cut ? "cut the shared cache" : "the shared cache answers again");
        disturbed.addAll(sightings.keySet());
        stack.cut(cut);
        this.cut = cut;
        if (!cut) {
            // Each node's next call would have its cache probed again, in the background; done here, and waited for, so
            // that what the next step meets is known: the cache back in use on both nodes.
            for (Node n : nodes) {
                if (n.cache() instanceof ClusterRecordCache guarded) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!guarded.reachable() && System.nanoTime() < deadline) {
                        guarded.holds(key(0)); // a call on a bypassed cache has it probed again
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // polls the probe, run on the cache's thread
                    }
                    require(guarded.reachable(), "the shared cache is in use again within 30 s of the heal");
                }
            }
        }
        afterEveryStep.accept(this);
    }

    /** Whether the shared cache is cut off now: its markers hold no duplicate off. */
    private boolean cut;

    void restart(int node) {
        steps.add("restart " + node);
        disturbed.addAll(sightings.keySet());
        int i = door.singleNode() ? 0 : node;
        nodes[i].close();
        nodes[i] = node(i);
        if (door.singleNode()) {
            nodes[1] = nodes[0];
        }
        afterEveryStep.accept(this);
    }

    void step(Duration d) {
        steps.add("clock +" + d);
        clock.advance(d);
        if (d.compareTo(policy.ttl()) >= 0) {
            epoch++;
            answered.clear();
            sightings.clear();
            for (Map<String, Instant[]> seen : seenOn) {
                seen.clear();
            }
        }
        afterEveryStep.accept(this);
    }

    /** Whether this world's nodes take an operator's management calls (not on a cache of each node's own; see {@link #manage}). */
    boolean manageable() {
        return cacheKind != CacheKind.PER_NODE && nodes[0].management() != null;
    }

    /**
     * An operator's call between the calls. Deleting every record makes every key new (as the clock past the time to
     * live does): its next call runs, and no node answers the deleted answer, from its cache or the store. A restore
     * (export, delete, import) changes no key's answer. Not in worlds with a cache of each node's own: there a record one
     * node deletes is replayed by the other until its copy is {@code cache.local-max-age} old, as the guide says.
     */
    void manage(int node, boolean restore) {
        steps.add((restore ? "restore (export, delete all, import) on " : "delete every record on ") + node);
        Management m = at(node).management();
        String[] before = {keptAnswer(0), keptAnswer(1), keptAnswer(2)};
        try {
            if (restore) {
                m.restore();
            } else {
                m.deleteAll();
            }
        } catch (dev.idempotency.IdempotencyCacheException refused) {
            // The shared cache cannot take the deleted records' tombstones: nothing is deleted (another node would go
            // on answering them from its copy).
            require(cacheKind == CacheKind.SHARED && cut, "a deletion is refused only while the shared cache does not answer: " + refused);
            for (int key = 0; key < 3; key++) {
                require(java.util.Objects.equals(keptAnswer(key), before[key]), "a refused deletion deletes nothing: k" + key);
            }
            afterEveryStep.accept(this);
            return;
        }
        if (!restore) {
            epoch++;
            answered.clear();
            sightings.clear();
            for (Map<String, Instant[]> seen : seenOn) {
                seen.clear();
            }
        }
        afterEveryStep.accept(this);
    }

    /** A key's kept answer and when it was completed ({@code null}: nothing kept). */
    private String keptAnswer(int key) {
        IdempotencyRecord r = kept(key(key));
        return r == null ? null : r.completedAt() + " " + text(r);
    }

    /** An export an operator took earlier (the records, or their file), and the keys' lifetime it was taken in. */
    private Object olderExport;
    private int olderExportEpoch = -1;
    /** Run once by the next work, after its row is written (while it holds its claim). */
    private volatile Runnable midWork;

    /** Runs once in the next call's own transaction of the caller's, after it began, before the call (then cleared). */
    private volatile Runnable inCallersTransactionFirst;

    /**
     * A call whose caller's transaction (where the door has one) began and read, as an application reads before it
     * calls, before a duplicate on the other node ran and committed; the call comes after. The duplicate's answer is the
     * key's: the call is answered with it, or (in the caller's transaction, which may no longer see what committed after
     * its first read, as under MariaDB's repeatable read) told "in progress"; it never answers anything else, and work of
     * it never commits.
     */
    void callAfterADuplicateCommits(int node, int key, Outcome outcome) {
        steps.add("node " + node + " calls k" + key + " " + outcome + " after node " + (1 - node) + "'s duplicate committed"
                + (door.callersTransaction ? " (the caller's transaction began and read before)" : ""));
        ScopedKey k = key(key);
        IdempotencyRecord before = kept(k);
        Runnable duplicate = () -> {
            try {
                Answer first = racers.submit(() -> invoke(at(1 - node), key, "A", Outcome.OK)).get(60, TimeUnit.SECONDS);
                note(k, first);
            } catch (Exception e) {
                throw new AssertionError("the duplicate did not answer", e);
            }
        };
        if (door.callersTransaction) {
            inCallersTransactionFirst = () -> {
                readTheLedger();
                duplicate.run();
            };
        } else {
            duplicate.run();
        }
        Answer a;
        try {
            a = invoke(at(node), key, "A", outcome);
        } finally {
            inCallersTransactionFirst = null;
        }
        IdempotencyRecord kept = kept(k);
        note(k, a);
        if (kept != null && !requestOf(kept).equals(request("A"))) {
            require(a.reused, "a call after another request's answer was kept is refused as reused, got " + a);
        } else if (kept != null) {
            // An optimistic call in a transaction that read before the duplicate committed may not see its record: it
            // runs, its record's insert meets the duplicate's, and its work rolls back with the caller's transaction.
            boolean stale = door.callersTransaction && mode == ClaimMode.OPTIMISTIC;
            require(a.replayed && text(kept).equals(a.text) || stale && (a.inProgress || a.ran && !a.committed),
                    "a call after its duplicate's answer was kept is answered with it (" + text(kept) + "), got " + a);
        }
        afterEveryStep.accept(this);
    }

    /** What an application reads in its transaction before it calls: its ledger's rows (this begins a snapshot where the database keeps one per transaction). */
    private void readTheLedger() {
        try (Connection c = env.dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("select count(*) from test_payment");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** Whether an export taken earlier can be imported: the keys' lifetime it was taken in is the present one. */
    boolean canImportOlder() {
        return olderExport != null && olderExportEpoch == epoch;
    }

    /**
     * An operator exports every record on a node while the other node's call of a key runs (after its work wrote its
     * row, while its claim is held: a leased claim is in the export, as a claim).
     */
    void exportDuringCall(int node, int key) {
        exportDuringCall(node, key, Outcome.OK);
    }

    /** As {@link #exportDuringCall(int, int)}, the call ending as given (a released key: the export has its claim). */
    void exportDuringCall(int node, int key, Outcome outcome) {
        steps.add("node " + node + " exports the records while node " + (1 - node) + " calls k" + key + ", " + outcome);
        Management m = at(node).management();
        midWork = () -> {
            try {
                olderExport = racers.submit(m::export).get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("the export did not finish", e);
            }
        };
        try {
            callChecked(1 - node, key, "A", outcome);
        } finally {
            if (midWork != null) {
                midWork = null; // the call ran no work (answered from what was kept, or in progress): exported after it
                olderExport = m.export();
            }
        }
        olderExportEpoch = epoch;
        afterEveryStep.accept(this);
    }

    /**
     * An operator imports the export taken earlier (in the keys' present lifetime) on a node while the other node calls
     * a key. What the export holds of a finished key is that key's answer now too, so nothing may change: the kept
     * answers stay, a retry is replayed, a claim the export caught (its call long finished) takes nothing's place. The
     * import is refused whole when it meets a call still running.
     */
    void importOlder(int node, int key) {
        steps.add("node " + node + " imports the earlier export while node " + (1 - node) + " calls k" + key);
        Management m = at(node).management();
        Object export = olderExport;
        Future<Boolean> imported = racers.submit(() -> m.importOlder(export));
        try {
            callChecked(1 - node, key, "A", Outcome.OK);
        } finally {
            boolean done;
            try {
                done = imported.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("the import failed", e);
            }
            if (done && door == Door.MANAGER) {
                // The sightings' "last seen" are the export's again: older than the truth, so only the lower bound
                // holds until a node sees each again.
                importedSightings.addAll(sightings.keySet());
                disturbed.addAll(sightings.keySet());
                for (Map<String, Instant[]> seen : seenOn) {
                    seen.clear();
                }
            }
        }
        afterEveryStep.accept(this);
    }

    /** Sighting ids whose "last seen" an import set back to the export's, until a node sees them again. */
    private final Set<String> importedSightings = new HashSet<>();

    /** When each sighting id was last seen, by any node, and by each node. */
    private final Map<String, Instant[]> sightings = new HashMap<>();
    @SuppressWarnings("unchecked")
    private final Map<String, Instant[]>[] seenOn = new Map[] {new HashMap<String, Instant[]>(), new HashMap<String, Instant[]>()};
    /** Sighting ids whose "last seen" may lag a node's sighting: the cache was flushed, cut or restarted since. */
    private final Set<String> disturbed = new HashSet<>();

    /** Whether this world's door is the manager, whose nodes answer sightings ({@code IdempotencyManager.check}). */
    boolean sights() {
        return door == Door.MANAGER;
    }

    /**
     * {@code IdempotencyManager.check} of a sighting id on a node: "seen" exactly when some node saw it in the record's
     * life, and the time since it was last seen never shorter than the truth nor longer than since this node's own last
     * sighting; without a cache, and on a shared cache left alone since the last sighting, exactly the truth.
     */
    void sight(int node, int id) {
        String name = prefix + "-seen-" + id;
        steps.add("node " + node + " checks " + name);
        // The clock moves on its own too: each sighting's instant is known to lie between the clock before and after it
        // (and the store keeps milliseconds).
        Instant before = clock.instant();
        dev.idempotency.IdempotencyManager.Check c = ((WeldNode) at(node)).check(name);
        Instant after = clock.instant();
        Instant[] last = sightings.get(name);
        require(c.seen() == (last != null), name + " is seen exactly when a node saw it before: " + c);
        if (last != null) {
            Duration reported = c.sinceLastSeen().orElseThrow(() -> new AssertionError("seen, with no age: " + c));
            Duration shortest = Duration.between(last[1], before);
            Duration longest = Duration.between(last[0].truncatedTo(java.time.temporal.ChronoUnit.MILLIS), after);
            require(reported.compareTo(shortest) >= 0, name + " was last seen at least " + shortest + " ago, not " + reported);
            Instant[] own = seenOn[node].get(name);
            if (own != null) {
                Duration ownLongest = Duration.between(own[0].truncatedTo(java.time.temporal.ChronoUnit.MILLIS), after);
                require(reported.compareTo(ownLongest) <= 0, name + ": this node saw it at most " + ownLongest
                        + " ago, yet it answers " + reported);
            }
            if ((cacheKind == CacheKind.NONE || cacheKind == CacheKind.SHARED && !cut && !disturbed.contains(name))
                    && !importedSightings.contains(name)) {
                require(reported.compareTo(longest) <= 0, name + " was last seen (by any node) at most " + longest
                        + " ago, not " + reported);
            }
        }
        Instant[] now = {before, after};
        sightings.put(name, now);
        seenOn[node].put(name, now);
        disturbed.remove(name);
        importedSightings.remove(name);
        afterEveryStep.accept(this);
    }

    /** One call on its own: a retry of a kept key must be answered with the kept answer, the work not run again. */
    /** Steps that took longer than a second (a duplicate that waited), for the run's statistics. */
    final List<String> slow = new ArrayList<>();

    void call(int node, int key, String request, Outcome outcome) {
        long t0 = System.nanoTime();
        try {
            callTimed(node, key, request, outcome);
        } finally {
            slowStep("call " + outcome, t0);
        }
    }

    void race(int key, int n, Outcome first, boolean oneNode) {
        race(key, n, first, oneNode, false);
    }

    /** {@code mixed}: the second duplicate is another request (request B) with the same key. */
    void race(int key, int n, Outcome first, boolean oneNode, boolean mixed) {
        long t0 = System.nanoTime();
        try {
            raceTimed(key, n, first, oneNode, mixed);
        } finally {
            slowStep("race " + first + (oneNode ? " one node" : " two nodes"), t0);
        }
    }

    private void slowStep(String what, long t0) {
        long ms = (System.nanoTime() - t0) / 1_000_000;
        if (ms > 1000) {
            slow.add(mode + " " + door + " " + cacheKind + " " + (policy.waitForResult() ? "WAIT " : "REJECT ") + what + " " + (ms / 1000) + " s");
        }
    }

    private void callTimed(int node, int key, String request, Outcome outcome) {
        callChecked(node, key, request, outcome);
        afterEveryStep.accept(this);
    }

    /** One call, and what its answer must be; the invariants are the caller's to check after. */
    private void callChecked(int node, int key, String request, Outcome outcome) {
        steps.add("call node " + node + " k" + key + " " + request + " " + outcome);
        ScopedKey k = key(key);
        IdempotencyRecord before = kept(k);
        int runsBefore = runs(k).get();
        Answer a = invoke(at(node), key, request, outcome);
        note(k, a);
        if (before != null) {
            String was = text(before);
            if (requestOf(before).equals(request(request))) {
                require(a.replayed && was.equals(a.text), "a retry of the kept " + k.key() + " is answered with its answer ("
                        + was + "), got " + a);
            } else {
                require(a.reused, "another request with the kept " + k.key() + " is refused as reused, got " + a);
            }
            require(runs(k).get() == runsBefore, "a retry of the kept " + k.key() + " never runs the work again");
        } else {
            require(!a.inProgress, "nothing holds " + k.key() + ", yet the call was answered in progress: " + a);
            require(!a.reused, "nothing was kept for " + k.key() + ", yet the call was refused as reused: " + a);
            require(!a.replayed, "nothing was kept for " + k.key() + ", yet a replay: " + a);
        }
    }

    /** Duplicates at once, on both nodes: at most one runs to commit; every success answered is the kept one. */
    private void raceTimed(int key, int n, Outcome first, boolean oneNode, boolean mixed) {
        steps.add("race k" + key + " x" + n + (oneNode ? " on node 0" : " on both nodes") + " (one " + first + ")"
                + (mixed ? " (one request B)" : ""));
        ScopedKey k = key(key);
        IdempotencyRecord before = kept(k);
        int runsBefore = runs(k).get();
        // Known and open: optimistic duplicates that race to take over a key's expired record can both lose, so a
        // waiting duplicate may be told "in progress" though no call will finish; its retry runs. On MariaDB each insert
        // meets the old row and then waits on the other's lock; on PostgreSQL (once in about 1,600 schedules) both
        // read the old row under a shared lock, then each asks for the exclusive one without waiting, and each is
        // refused. Every other invariant holds there too.
        boolean expiredTakeover = stack.database != dev.idempotency.testing.TestDatabase.H2
                && mode == ClaimMode.OPTIMISTIC && store.find(k).filter(r -> r.isExpired(clock.instant())).isPresent();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Answer>> futures = new ArrayList<>();
        List<String> requests = new ArrayList<>();
        // A first call that holds its claim: the others start once it holds it (or answered without running)
        boolean staggered = first == Outcome.HOLDS_PAST_THE_STATEMENT_BOUND;
        CountDownLatch held = new CountDownLatch(staggered ? 1 : 0);
        holding = staggered ? held : null;
        java.util.concurrent.atomic.AtomicReference<Future<Answer>> holder = new java.util.concurrent.atomic.AtomicReference<>();
        for (int i = 0; i < n; i++) {
            Node node = at(oneNode ? 0 : i % 2);
            Outcome outcome = i == 0 ? first : Outcome.OK;
            String request = mixed && i == 1 ? "B" : "A";
            requests.add(request);
            boolean follows = staggered && i > 0;
            futures.add(racers.submit(() -> {
                go.await();
                while (follows && !held.await(10, TimeUnit.MILLISECONDS) && !holder.get().isDone()) {
                    Thread.onSpinWait();
                }
                return invoke(node, key, request, outcome);
            }));
            if (i == 0) {
                holder.set(futures.get(0));
            }
        }
        go.countDown();
        for (int i = 0; i < n; i++) {
            Future<Answer> f = futures.get(i);
            String request = requests.get(i);
            Answer a;
            try {
                a = f.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("a duplicate never answered", e);
            }
            // An atomic call's kept failure in the caller's transaction can lose to a duplicate on another node that
            // claims the key in the moment between that transaction's rollback and the failure's own write, once the
            // caller holds the failure: that duplicate's answer is then the key's, and the failure is not kept
            // (logged). On one node it cannot. Everywhere else a failure is handed over only once it is the key's
            // answer: an optimistic call in the caller's transaction stores it before the caller hears it, and one in
            // the library's transaction (either claim) is answered as the duplicate's duplicate when it lost.
            boolean heldOff = oneNode || !(mode == ClaimMode.ATOMIC && door.callersTransaction);
            if (heldOff || a.text == null || !a.text.startsWith("fail:")) {
                note(k, a);
            }
            if (before != null && requestOf(before).equals(request(request))) {
                require(a.replayed && text(before).equals(a.text), "a duplicate of the kept " + k.key() + " is answered with its answer, got " + a);
            } else if (before != null) {
                require(a.reused, "another request with the kept " + k.key() + " is refused as reused, got " + a);
            }
            // A duplicate that waits for the first call's answer gets it (the first settles well within the wait); but
            // an atomic or optimistic claim inside the caller's transaction that met the other's row cannot look again
            // (the statement may have broken the transaction, as on PostgreSQL): it is told "in progress", and the
            // caller's retry replays (the next step checks that).
            boolean canLookAgain = (!door.callersTransaction || mode == ClaimMode.LEASED) && !expiredTakeover;
            require(!(policy.waitForResult() && canLookAgain && a.inProgress),
                    "a duplicate that waits is answered, not told in progress: " + a);
        }
        if (before != null) {
            require(runs(k).get() == runsBefore, "duplicates of the kept " + k.key() + " never run the work again");
        }
        afterEveryStep.accept(this);
    }

    // ------------------------------------------------------------------------------------------------ invariants

    /** The invariants, after every step (once the cache writes the step queued are done: a schedule is replayable). */
    void check() {
        for (Node n : nodes) {
            if (n.cache() instanceof ClusterRecordCache guarded) {
                require(guarded.awaitWrites(Duration.ofSeconds(30)), "the cache's writes are done within 30 s");
            }
        }
        try {
            require(env.tm.getStatus() == Status.STATUS_NO_TRANSACTION, "no transaction is left on the caller's thread");
        } catch (jakarta.transaction.SystemException e) {
            throw new AssertionError(e);
        }
        // The library's own background writes (the manager's sightings, flushed once a second on the scheduler) take a
        // connection for a moment of their own: one left out is one still out 10 s later.
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (env.dataSource.getMetrics().activeCount() > 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        require(env.dataSource.getMetrics().activeCount() == 0, "no connection is left out of the pool ("
                + env.dataSource.getMetrics().activeCount() + " active)");
        for (Node n : nodes) {
            require(n.heartbeats() == 0, "no lease heartbeat is left running (" + n.heartbeats() + ")");
        }
        for (int key = 0; key < 3; key++) {
            ScopedKey k = key(key);
            List<String> rows = rows(k);
            long ok = rows.stream().filter(r -> r.endsWith("#OK")).count();
            // The manager claims nothing: an application that checks, runs, then stores runs duplicates that arrive
            // together (the first store wins, the others answer it); once a response is stored, no call runs again.
            require(ok <= 1 || door == Door.MANAGER, "at most one execution of " + k.key() + " commits its work: " + rows);
            if (transactional()) {
                require(ok == rows.size(), "work that failed or rolled back never commits in a transaction: " + rows);
            }
            List<String> nested = nestedRows(k);
            require(nested.stream().noneMatch(r -> r.endsWith("#ROLLS_BACK")),
                    "a nested step whose transaction rolled back committed nothing: " + nested);
            for (String committed : nestedCommitted) {
                if (committed.startsWith("nested:" + k.key() + "#" + epoch + "#")) {
                    require(nested.contains(committed), "a nested step that committed stays committed, whatever the call's own"
                            + " transaction did (" + committed + "): " + nested);
                }
            }
            IdempotencyRecord kept = kept(k);
            Set<String> successes = answered.getOrDefault(k.key(), Set.of());
            if (kept == null) {
                require(successes.isEmpty(), "a success was answered for " + k.key() + " (" + successes + "), yet nothing is kept");
                continue;
            }
            String text = text(kept);
            for (String s : successes) {
                require(s.equals(text), "every success answered for " + k.key() + " is the kept one (" + text + "): " + successes);
            }
            if (kept.status() == RecordStatus.COMPLETED && door == Door.RECORD) {
                require(ok == 1, "the kept success of " + k.key() + " (a record handled) committed its work once: " + rows);
            } else if (kept.status() == RecordStatus.COMPLETED) {
                String n = text.substring(text.lastIndexOf('-') + 1);
                require(rows.contains(row(k, n, Outcome.OK)), "the kept success of " + k.key() + " (" + text
                        + ") committed its work: " + rows);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ the doors

    /** What a call was answered. */
    record Answer(boolean replayed, boolean ran, boolean committed, String text, boolean inProgress, boolean reused, Throwable other) {
        static Answer ran(String text, boolean committed) {
            return new Answer(false, true, committed, text, false, false, null);
        }

        static Answer replayed(String text) {
            return new Answer(true, false, true, text, false, false, null);
        }

        /** A call that ran, its work committed or not as its transaction ended; a replay stays one. */
        Answer committed(boolean committed) {
            return ran ? new Answer(false, true, committed, text, false, false, null) : this;
        }

        /**
         * What a call that threw was answered; {@code ranHere}: whether this call ran the work (a kept failure thrown
         * without it is the kept answer, replayed).
         */
        static Answer threw(Throwable t, boolean ranHere) {
            if (t instanceof IdempotencyInProgressException) {
                return new Answer(false, false, false, null, true, false, null);
            }
            if (t instanceof IdempotencyKeyReusedException) {
                return new Answer(false, false, false, null, false, true, null);
            }
            if (t instanceof ContractApplication.Kept kept) {
                return ranHere ? new Answer(false, true, true, "fail:" + kept.getMessage(), false, false, null)
                        : replayed("fail:" + kept.getMessage());
            }
            if (t instanceof ContractApplication.Released) {
                return new Answer(false, true, false, null, false, false, null);
            }
            return new Answer(false, false, false, null, false, false, t);
        }
    }

    private void note(ScopedKey k, Answer a) {
        if (a.other != null) {
            throw new AssertionError("an answer the contract does not know: " + a.other, a.other);
        }
        // A success that committed, a failure the method keeps, a replay: each is the key's answer, and the kept one.
        if (a.replayed || (a.ran && a.committed && a.text != null)) {
            answered.computeIfAbsent(k.key(), x -> new HashSet<>()).add(a.text);
        }
    }

    /** A consumer's answer: the record was handled (its acknowledgement). */
    static final String RECORD_DONE = "ok:record handled";

    /** The offsets of the records the consumer's door sends (each call is a delivery of its own). */
    private final AtomicInteger offsets = new AtomicInteger();

    /** Whether the work ran in the call under way on this thread. */
    private final ThreadLocal<Boolean> ranHere = ThreadLocal.withInitial(() -> false);

    Answer invoke(Node node, int key, String request, Outcome outcome) {
        ranHere.set(false);
        try {
            return node.invoke(key, request, outcome);
        } finally {
            ranHere.remove();
        }
    }

    /** A call that answers: ran (its work committed as drawn) or replayed. */
    @FunctionalInterface
    private interface Invocation {
        Answer call() throws Throwable;
    }

    /** A node of the world: an engine called as the doors call it, or a CDI container with the library's extension. */
    private interface Node {
        Answer invoke(int key, String request, Outcome outcome);

        void flush();

        int heartbeats();

        void close();

        /** The cache the node's engine uses (the library's own, guarded, where it is shared). */
        default RecordCache cache() {
            return RecordCache.NONE;
        }

        /** An operator's management call on this node ({@code null}: the door has none here). */
        default Management management() {
            return null;
        }
    }

    /** What an operator does to the records, through the manager (CDI nodes) or the engine as the manager calls it. */
    interface Management {
        /** Deletes every record but a live claim; each deleted key leaves the cache. */
        void deleteAll();

        /** Exports every record, deletes them, imports the export (a restore): every key keeps its answer. */
        void restore();

        /** Exports every record, for an import later: the records, or the file they were written to. */
        Object export();

        /** Imports an export taken earlier; {@code false}: refused whole, for it met the claim of a call still running. */
        boolean importOlder(Object export);
    }

    /** The engine as {@code IdempotencyManager} calls it. */
    private static Management management(IdempotencyEngine engine) {
        return new Management() {
            @Override
            public void deleteAll() {
                engine.delete(new dev.idempotency.spi.Deletion.All(), 2);
            }

            @Override
            public void restore() {
                List<IdempotencyRecord> all = engine.all();
                engine.delete(new dev.idempotency.spi.Deletion.All(), 2);
                engine.importAll(all);
            }

            @Override
            public Object export() {
                return engine.all();
            }

            @Override
            @SuppressWarnings("unchecked")
            public boolean importOlder(Object export) {
                try {
                    engine.importAll((List<IdempotencyRecord>) export);
                    return true;
                } catch (dev.idempotency.spi.StoreManagement.LiveClaimException refused) {
                    return false;
                }
            }
        };
    }

    /** The engine called as a door calls it: a method's run (with or without the caller's transaction), the HTTP filter's hold and settle. */
    private final class EngineNode implements Node {
        private final IdempotencyEngine engine;
        private final RecordCache cache;

        EngineNode(IdempotencyEngine engine, RecordCache cache) {
            this.engine = engine;
            this.cache = cache;
        }

        @Override
        public RecordCache cache() {
            return cache;
        }

        @Override
        public Answer invoke(int key, String request, Outcome outcome) {
            ScopedKey k = key(key);
            Invocation run = () -> answer(engine.flow(mode).run(k, fingerprint(request), null, policy, work(k, request, outcome)));
            return switch (door) {
                case METHOD -> method(run, outcome);
                case METHOD_IN_CALLERS_TRANSACTION -> inCallersTransaction(run, outcome);
                case HTTP -> http(engine, k, request, outcome);
                default -> throw new IllegalStateException(door + " is reached through CDI");
            };
        }

        @Override
        public void flush() {
            engine.flushCache();
        }

        @Override
        public Management management() {
            return World.management(engine);
        }

        @Override
        public int heartbeats() {
            return engine.heartbeats();
        }

        @Override
        public void close() {
            engine.renewLeasesWith(null, Duration.ZERO);
            if (cache instanceof ClusterRecordCache guarded) {
                guarded.close();
            }
        }
    }

    /**
     * A node as an application deploys the library: Weld with the library's extension and Narayana's
     * {@code @Transactional}, the world's store, clock and (shared) cache as the application's beans, the cache of its
     * own ({@code idempotency.cache.mode=local}) or none by configuration; called through the {@code @Idempotent}
     * interceptor, the functional API or the manager.
     */
    private final class WeldNode implements Node {
        private final org.jboss.weld.environment.se.WeldContainer container;
        /** The class loader this node's configuration is registered for (the build compatible extension's door), else {@code null}. */
        private final ClassLoader configLoader;
        private final ContractApplication.Payments payments;
        private final ContractApplication.Consumers consumers;
        private final dev.idempotency.Idempotency idempotency;
        private final dev.idempotency.IdempotencyManager manager;
        private final IdempotencyEngine engine;
        private final ContractApplication.Ledger ledger;

        WeldNode(int i) {
            Map<String, String> config = new HashMap<>();
            config.put("idempotency.node-id", prefix + "-node-" + i);
            config.put("idempotency.cache.mode", cacheKind == CacheKind.PER_NODE ? "local" : "none");
            config.put("idempotency.cache.secret", Stack.SECRET);
            // a shared cache that failed is probed again at the next call, not after 5 s: schedules are quick
            config.put("idempotency.cache.cluster-retry-interval", Stack.TUNING.retryInterval().toString());
            config.put("idempotency.ttl", policy.ttl().toString());
            config.put("idempotency.lease", policy.lease().toString());
            if (door == Door.RECORD) {
                config.put("Idempotent/keptFailures", "nack");
            }
            List<Class<?>> beans = new ArrayList<>(List.of(ContractApplication.Resources.class, ContractApplication.Payments.class,
                    ContractApplication.Consumers.class, ContractApplication.Ledger.class));
            if (cacheKind == CacheKind.SHARED) {
                beans.add(ContractApplication.SharedCache.class); // the application's cache wins over the configured mode
            }
            if (door == Door.INTERCEPTOR_CDI_LITE) {
                // the configuration is the application's MicroProfile Config: each node's own, for a class loader of its own
                // that is the thread's while the container starts (the extension reads it then)
                ClassLoader before = Thread.currentThread().getContextClassLoader();
                configLoader = new ClassLoader(before) { };
                org.eclipse.microprofile.config.spi.ConfigProviderResolver.instance()
                        .registerConfig(dev.idempotency.testing.IdempotencyWeld.config(config), configLoader);
                Thread.currentThread().setContextClassLoader(configLoader);
                try {
                    container = org.jboss.weld.junit5.WeldInitiator.createWeld().addBeanClasses(beans.toArray(Class<?>[]::new))
                            .addBuildCompatibleExtensions(dev.idempotency.testing.CdiLite.class)
                            .addExtension(new com.arjuna.ats.jta.cdi.TransactionExtension())
                            .containerId(prefix + "-" + started)
                            .initialize();
                } finally {
                    Thread.currentThread().setContextClassLoader(before);
                }
            } else {
                configLoader = null;
                container = dev.idempotency.testing.IdempotencyWeld.weld(config, beans.toArray(Class<?>[]::new))
                        .addExtension(new com.arjuna.ats.jta.cdi.TransactionExtension())
                        .containerId(prefix + "-" + started)
                        .initialize();
            }
            payments = container.select(ContractApplication.Payments.class).get();
            consumers = container.select(ContractApplication.Consumers.class).get();
            idempotency = container.select(dev.idempotency.Idempotency.class).get();
            manager = container.select(dev.idempotency.IdempotencyManager.class).get();
            engine = container.select(IdempotencyEngine.class).get();
            ledger = container.select(ContractApplication.Ledger.class).get();
        }

        @Override
        public RecordCache cache() {
            RecordCache c = container.select(dev.idempotency.runtime.IdempotencyRuntime.class).get().recordCache();
            return c == null ? RecordCache.NONE : c;
        }

        @Override
        public Answer invoke(int key, String request, Outcome outcome) {
            String keyText = keyText(key);
            AtomicCall<String> work = work(key(key), request, outcome);
            ContractApplication.WORK.set(work::run);
            ContractApplication.LEDGER.set(ledger);
            try {
                return switch (door) {
                    case INTERCEPTOR, INTERCEPTOR_CDI_LITE -> method(() -> ranOrReplayed(pay(keyText, request)), outcome);
                    case INTERCEPTOR_IN_CALLERS_TRANSACTION -> inCallersTransaction(() -> ranOrReplayed(pay(keyText, request)), outcome);
                    case FUNCTIONAL -> method(() -> ranOrReplayed(idempotency.with(options())
                            .call(ContractApplication.NAMESPACE, keyText, request, String.class, work::run)), outcome);
                    case MANAGER -> manager(keyText, work);
                    case RECORD -> method(() -> consume(keyText, request), outcome);
                    default -> throw new IllegalStateException(door + " is not reached through CDI");
                };
            } finally {
                ContractApplication.WORK.remove();
                ContractApplication.LEDGER.remove();
            }
        }

        /**
         * A record with the key in its header, handed to the consumer of this world's mode and duplicate policy; its
         * answer is what became of the record: acknowledged after the work ran (and committed), acknowledged without it
         * (a duplicate), or not acknowledged (its transaction rolled back; the consumer threw).
         */
        private Answer consume(String key, String request) throws Throwable {
            java.util.concurrent.atomic.AtomicInteger acks = new java.util.concurrent.atomic.AtomicInteger();
            List<Throwable> nacks = new java.util.concurrent.CopyOnWriteArrayList<>();
            org.apache.kafka.common.header.internals.RecordHeaders headers = new org.apache.kafka.common.header.internals.RecordHeaders();
            headers.add(ContractApplication.HEADER, key.getBytes(StandardCharsets.UTF_8));
            org.apache.kafka.clients.consumer.ConsumerRecord<String, String> record = new org.apache.kafka.clients.consumer.ConsumerRecord<>(
                    "contract", 0, offsets.incrementAndGet(), 0L, org.apache.kafka.common.record.TimestampType.CREATE_TIME, 0, 0, null,
                    request, headers, java.util.Optional.empty());
            org.eclipse.microprofile.reactive.messaging.Message<String> message = org.eclipse.microprofile.reactive.messaging.Message.of(
                    request, org.eclipse.microprofile.reactive.messaging.Metadata.of(
                            new io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata<>(record, "contract")),
                    () -> {
                        acks.incrementAndGet();
                        return java.util.concurrent.CompletableFuture.completedFuture(null);
                    }, reason -> {
                        nacks.add(reason);
                        return java.util.concurrent.CompletableFuture.completedFuture(null);
                    });
            boolean waits = policy.waitForResult();
            java.util.concurrent.CompletionStage<Void> stage = switch (mode) {
                case ATOMIC -> waits ? consumers.atomicWait(message) : consumers.atomicReject(message);
                case OPTIMISTIC -> waits ? consumers.optimisticWait(message) : consumers.optimisticReject(message);
                default -> waits ? consumers.leasedWait(message) : consumers.leasedReject(message);
            };
            try {
                stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause();
            }
            require(acks.get() + nacks.size() == 1, "a record is acknowledged or refused, once (" + acks.get() + " acks, "
                    + nacks + ")");
            if (!nacks.isEmpty()) {
                Throwable reason = nacks.get(0);
                if (reason instanceof dev.idempotency.IdempotencyException
                        && !reason.getClass().getPackageName().equals("dev.idempotency")) {
                    // The work's transaction rolled back (marked for rollback): the record is refused, to come again,
                    // with the library's own reason (no public exception: a key in progress or reused is one).
                    require(ranHere.get(), "a record refused without running: " + reason);
                    return new Answer(false, true, false, null, false, false, null);
                }
                // The call failed (the work threw, a kept failure refused again with keptFailures=nack, a key in
                // progress or reused): the consumer refuses the record with the failure, its answer.
                throw reason;
            }
            return ranHere.get() ? Answer.ran(RECORD_DONE, true) : Answer.replayed(RECORD_DONE);
        }

        /** The interceptor's method of this world's mode and duplicate policy. */
        private String pay(String key, String request) throws Exception {
            boolean waits = policy.waitForResult();
            return switch (mode) {
                case ATOMIC -> waits ? payments.atomicWait(key, request) : payments.atomicReject(key, request);
                case OPTIMISTIC -> waits ? payments.optimisticWait(key, request) : payments.optimisticReject(key, request);
                default -> waits ? payments.leasedWait(key, request) : payments.leasedReject(key, request);
            };
        }

        /** The functional API's options: those of the methods. */
        private dev.idempotency.IdempotencyOptions options() {
            return dev.idempotency.IdempotencyOptions.builder().ttl(policy.ttl()).lease(policy.lease()).claim(mode)
                    .onConcurrent(policy.waitForResult() ? dev.idempotency.OnConcurrent.WAIT : dev.idempotency.OnConcurrent.REJECT)
                    .waitTimeout(policy.waitTimeout().isZero() ? Duration.ofSeconds(20) : policy.waitTimeout())
                    .keepOn(ContractApplication.Kept.class).build();
        }

        /**
         * As a gateway uses the manager: a response stored is answered; else the work runs and its answer (a success, or
         * a failure the gateway keeps) is stored, and a store that finds another answer there answers that one.
         */
        private Answer manager(String keyText, AtomicCall<String> work) {
            dev.idempotency.RequestKey rk = dev.idempotency.RequestKey.of(keyText);
            try {
                if (manager.check(rk).responseStored()) {
                    return Answer.replayed(new String(manager.retrieve(rk), StandardCharsets.UTF_8));
                }
                String text;
                try {
                    text = "ok:" + work.run();
                } catch (ContractApplication.Kept kept) {
                    text = "fail:" + kept.getMessage();
                }
                try {
                    manager.store(rk, text);
                    return Answer.ran(text, true);
                } catch (IdempotencyKeyReusedException first) {
                    return Answer.replayed(new String(manager.retrieve(rk), StandardCharsets.UTF_8));
                } catch (IdempotencyInProgressException storing) {
                    return manager.await(rk, Duration.ofSeconds(20)).map(r -> Answer.replayed(new String(r, StandardCharsets.UTF_8)))
                            .orElseGet(() -> Answer.threw(storing, false));
                }
            } catch (Throwable t) {
                return Answer.threw(t, ranHere.get());
            }
        }

        @Override
        public void flush() {
            manager.flushCache();
        }

        @Override
        public Management management() {
            return new Management() {
                @Override
                public void deleteAll() {
                    manager.clear();
                }

                @Override
                public void restore() {
                    try {
                        java.nio.file.Path file = java.nio.file.Files.createTempFile("contract-export", ".jsonl");
                        try {
                            manager.export(file);
                            manager.clear();
                            manager.importFrom(file);
                        } finally {
                            java.nio.file.Files.deleteIfExists(file);
                        }
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                }

                @Override
                public Object export() {
                    try {
                        java.nio.file.Path file = java.nio.file.Files.createTempFile("contract-older-export", ".jsonl");
                        file.toFile().deleteOnExit();
                        manager.export(file);
                        return file;
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                }

                @Override
                public boolean importOlder(Object export) {
                    try {
                        manager.importFrom((java.nio.file.Path) export);
                        return true;
                    } catch (dev.idempotency.IdempotencyTransferException e) {
                        if (e.getCause() instanceof dev.idempotency.spi.StoreManagement.LiveClaimException) {
                            return false;
                        }
                        throw e;
                    }
                }
            };
        }

        /** {@code IdempotencyManager.check} of a sighting id. */
        dev.idempotency.IdempotencyManager.Check check(String id) {
            return manager.check(dev.idempotency.RequestKey.of(id));
        }

        @Override
        public int heartbeats() {
            return engine.heartbeats();
        }

        @Override
        public void close() {
            container.close();
            if (configLoader != null) {
                org.eclipse.microprofile.config.spi.ConfigProviderResolver resolver = org.eclipse.microprofile.config.spi.ConfigProviderResolver.instance();
                resolver.releaseConfig(resolver.getConfig(configLoader));
            }
        }
    }

    /**
     * The HTTP filter's node: requests to {@code /contract/<mode>-<policy>}, answered by the schedule's work on the
     * request's thread: {@code 201} and its answer, {@code 400} and a failure the filter keeps (a 4xx), {@code 503} for one
     * it does not (a 5xx), a success marked for rollback, or a {@code 201} whose entity the writer cannot write.
     */
    /** The HTTP door's size cap ({@code idempotency.max-response-size}), and where an answer over it names its value. */
    static final long CAP = 4096;
    static final String OVER_THE_CAP = "/over-the-cap/";

    private final class HttpNode implements Node {
        private final dev.idempotency.http.ContractServer server;
        /** The calls under way, by the id their request carries; the ids of those whose work ran. */
        private final Map<String, java.util.function.Supplier<jakarta.ws.rs.core.Response>> calls = new java.util.concurrent.ConcurrentHashMap<>();
        private final Set<String> ran = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private final AtomicInteger ids = new AtomicInteger();

        HttpNode() {
            Map<String, String> config = new HashMap<>();
            config.put("idempotency.node-id", prefix + "-node-0");
            config.put("idempotency.max-response-size", String.valueOf(CAP));
            config.put("idempotency.cache.mode", cacheKind == CacheKind.PER_NODE ? "local" : "none");
            config.put("idempotency.cache.secret", Stack.SECRET);
            // a shared cache that failed is probed again at the next call, not after 5 s: schedules are quick
            config.put("idempotency.cache.cluster-retry-interval", Stack.TUNING.retryInterval().toString());
            try {
                server = new dev.idempotency.http.ContractServer(config, env.dataSource, clock,
                        cacheKind == CacheKind.SHARED ? stack.manager : null, id -> calls.get(id).get());
            } catch (Exception e) {
                throw new AssertionError("the HTTP node did not start", e);
            }
        }

        @Override
        public Answer invoke(int key, String request, Outcome outcome) {
            String id = prefix + "-call-" + ids.incrementAndGet();
            ScopedKey k = key(key);
            calls.put(id, () -> respond(id, k, request, outcome));
            java.net.http.HttpResponse<String> r;
            try {
                r = server.post(mode.name().toLowerCase(java.util.Locale.ROOT) + (policy.waitForResult() ? "-wait" : "-reject"),
                        keyText(key), request, id);
            } catch (Exception e) {
                return Answer.threw(e, ran.contains(id));
            } finally {
                calls.remove(id);
            }
            boolean replayed = r.headers().firstValue("Idempotent-Replayed").filter("true"::equals).isPresent();
            boolean workRan = ran.remove(id);
            int status = r.statusCode();
            java.util.Optional<String> overTheCap = r.headers().firstValue("Location").filter(l -> l.contains(OVER_THE_CAP));
            if (status == 201 && overTheCap.isPresent()) {
                // An answer over the cap: the value it named; sent whole the first time, its status and headers alone
                // on a replay.
                String value = overTheCap.get().substring(overTheCap.get().indexOf(OVER_THE_CAP) + OVER_THE_CAP.length());
                require(replayed ? r.body().isEmpty() : r.body().startsWith(value + " ") && r.body().length() > CAP,
                        "an answer over the cap is sent whole, and replayed without its body: " + r.body().length() + " bytes");
                return replayed && !workRan ? Answer.replayed("ok:" + value)
                        : workRan && !replayed ? new Answer(false, true, true, "ok:" + value, false, false, null) : unknown(r, workRan);
            }
            if (replayed && !workRan && (status == 201 || status == 400)) {
                return Answer.replayed((status == 201 ? "ok:" : "fail:") + r.body());
            }
            if (replayed) {
                return unknown(r, workRan);
            }
            // The resource's own answers: its work ran in this request (a 400 of the filter's, a problem, is not one).
            return switch (status) {
                case 201 -> workRan ? new Answer(false, true, true, "ok:" + r.body(), false, false, null) : unknown(r, false);
                case 400 -> workRan && r.body().startsWith("failure-")
                        ? new Answer(false, true, true, "fail:" + r.body(), false, false, null) : unknown(r, workRan);
                case 409 -> Answer.threw(new IdempotencyInProgressException(r.body(), Duration.ZERO), workRan);
                case 422 -> Answer.threw(new IdempotencyKeyReusedException(r.body()), workRan);
                // released (the resource's 503, a 5xx the filter does not keep)
                case 503 -> outcome == Outcome.THROWS_RELEASED && workRan && r.body().startsWith("failure-")
                        ? new Answer(false, true, false, null, false, false, null) : unknown(r, workRan);
                // rolled back: a success marked for rollback, or one whose writer failed
                case 500 -> (outcome == Outcome.ROLLBACK_ONLY || outcome == Outcome.WRITER_FAILS
                        || outcome == Outcome.ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY || outcome == Outcome.NESTED_COMMITS_THEN_ROLLBACK_ONLY) && workRan && !r.body().contains("answer-")
                        ? new Answer(false, true, false, null, false, false, null) : unknown(r, workRan);
                default -> unknown(r, workRan);
            };
        }

        private Answer unknown(java.net.http.HttpResponse<String> r, boolean workRan) {
            return Answer.threw(new IllegalStateException("HTTP " + r.statusCode() + " " + r.headers().map() + " " + r.body()
                    + (workRan ? " (the work ran)" : "")), workRan);
        }

        /** The resource's answer, on the request's thread. */
        private jakarta.ws.rs.core.Response respond(String id, ScopedKey k, String request, Outcome outcome) {
            ran.add(id);
            try {
                String value = work(k, request, outcome).run();
                if (outcome == Outcome.WRITER_FAILS) {
                    return jakarta.ws.rs.core.Response.status(201).entity(new dev.idempotency.http.PaymentsResource.Unwritable())
                            .type(jakarta.ws.rs.core.MediaType.APPLICATION_JSON).build();
                }
                if (outcome == Outcome.ANSWERS_OVER_THE_CAP || outcome == Outcome.ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY) {
                    // The answer names its value where a replay carries it (Location); its body is over the cap, so
                    // the filter keeps the status and headers alone, before any of it is sent.
                    return jakarta.ws.rs.core.Response.status(201).header("Location", OVER_THE_CAP + value)
                            .entity(value + " " + "x".repeat((int) CAP)).build();
                }
                return jakarta.ws.rs.core.Response.status(201).entity(value).build();
            } catch (ContractApplication.Kept kept) {
                return jakarta.ws.rs.core.Response.status(400).entity(kept.getMessage()).build();
            } catch (ContractApplication.Released released) {
                return jakarta.ws.rs.core.Response.status(503).entity(released.getMessage()).build();
            } catch (Exception e) {
                return jakarta.ws.rs.core.Response.status(599).entity(e.toString()).build();
            }
        }

        /** A stored response's answer: its status's kind and its body. */
        static String text(byte[] stored) {
            try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(stored))) {
                in.readByte(); // the stored form's version
                int status = in.readShort();
                boolean bodyOmitted = in.readBoolean();
                int headers = in.readShort();
                String location = null;
                for (int i = 0; i < headers; i++) {
                    String name = in.readUTF();
                    String value = in.readUTF();
                    if (name.equalsIgnoreCase("Location")) {
                        location = value;
                    }
                }
                byte[] body = new byte[in.readInt()];
                in.readFully(body);
                if (bodyOmitted && location != null && location.contains(OVER_THE_CAP)) {
                    return "ok:" + location.substring(location.indexOf(OVER_THE_CAP) + OVER_THE_CAP.length());
                }
                return (status < 300 ? "ok:" : "fail:") + new String(body, StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                throw new AssertionError("not a stored response", e);
            }
        }

        @Override
        public void flush() {
            try {
                server.flush();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public int heartbeats() {
            try {
                return server.heartbeats();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void close() {
            try {
                server.close();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    /** A method's answer: the work ran in this call, or the kept value was returned without it. */
    private Answer ranOrReplayed(String value) {
        return ranHere.get() ? Answer.ran("ok:" + value, true) : Answer.replayed("ok:" + value);
    }

    /** A method with no transaction of the caller's: a success marked for rollback committed nothing. */
    private Answer method(Invocation call, Outcome outcome) {
        try {
            return call.call().committed(outcome != Outcome.ROLLBACK_ONLY && outcome != Outcome.NESTED_ACK_ROLLS_BACK
                    && outcome != Outcome.NESTED_ACK_COMMITS_THEN_ROLLBACK_ONLY && outcome != Outcome.NESTED_COMMITS_THEN_ROLLBACK_ONLY);
        } catch (Throwable t) {
            return Answer.threw(t, ranHere.get());
        }
    }

    private Answer inCallersTransaction(Invocation call, Outcome outcome) {
        Answer a;
        try {
            env.tm.begin();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        Runnable first = inCallersTransactionFirst;
        if (first != null) {
            inCallersTransactionFirst = null;
            first.run();
        }
        try {
            a = call.call();
        } catch (Throwable t) {
            rollback();
            return Answer.threw(t, ranHere.get());
        }
        if (outcome == Outcome.CALLER_ROLLS_BACK) {
            rollback();
            return a.committed(false);
        }
        boolean committed;
        try {
            env.tm.commit();
            committed = true;
        } catch (RollbackException e) {
            committed = false;
        } catch (Exception e) {
            rollback();
            if (outcome != Outcome.CALLERS_TRANSACTION_TIMES_OUT) {
                return Answer.threw(e, ranHere.get());
            }
            committed = false; // the caller learns at its commit that its transaction is gone
        }
        return a.committed(committed);
    }

    private Answer http(IdempotencyEngine engine, ScopedKey k, String request, Outcome outcome) {
        Decision d;
        try {
            d = engine.flow(mode).hold(k, fingerprint(request), null, policy);
        } catch (Throwable t) {
            return Answer.threw(t, ranHere.get());
        }
        if (d instanceof Decision.Replay replay) {
            return Answer.replayed(text(replay.record()));
        }
        Claimed claimed = ((Decision.Held) d).claimed();
        String value;
        try {
            value = work(k, request, outcome).run();
        } catch (ContractApplication.Kept kept) {
            // The resource answered a status the method keeps (a 4xx): stored as its answer.
            return settle(claimed, "fail:" + kept.getMessage());
        } catch (Throwable t) {
            claimed.giveUp(); // a status that is not kept (a 5xx): the key is free again
            return Answer.threw(t, ranHere.get());
        }
        if (outcome == Outcome.WRITER_FAILS) {
            claimed.giveUp();
            return Answer.threw(new ContractApplication.Released("the writer failed"), true);
        }
        return settle(claimed, "ok:" + value);
    }

    private Answer settle(Claimed claimed, String text) {
        try {
            boolean kept = claimed.complete(text.getBytes(StandardCharsets.UTF_8));
            return Answer.ran(text, kept);
        } catch (dev.idempotency.core.AnsweredFirst first) {
            return Answer.replayed(text(first.record())); // the filter sends the first answer, as a replay
        } catch (Throwable t) {
            return Answer.threw(t, ranHere.get());
        }
    }

    private Answer answer(AtomicOutcome<String> o) {
        if (o instanceof AtomicOutcome.Replayed<String> r) {
            return Answer.replayed(text(r.record()));
        }
        return Answer.ran("ok:" + ((AtomicOutcome.Ran<String>) o).value(), true);
    }

    private void rollback() {
        try {
            if (env.tm.getStatus() != Status.STATUS_NO_TRANSACTION) {
                try {
                    env.tm.rollback();
                } catch (IllegalStateException gone) {
                    env.tm.suspend(); // rolled back already (the reaper): only the thread's association is left
                }
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The work: one business row in the call's transaction (or on its own, with none), then the outcome. */
    private AtomicCall<String> work(ScopedKey k, String request, Outcome outcome) {
        return new AtomicCall<>() {
            @Override
            public String run() throws Exception {
                String n = String.valueOf(executions.incrementAndGet());
                runs(k).incrementAndGet();
                ranHere.set(true);
                requestOfRun.put(n, request(request));
                // Rows of work that answers (and, over HTTP or through the manager, of one whose failure is stored as
                // the answer) are OK rows.
                boolean answers = outcome == Outcome.OK || outcome == Outcome.WRITER_FAILS || outcome == Outcome.NESTED_ACK_COMMITS
                        || outcome == Outcome.HOLDS_PAST_THE_STATEMENT_BOUND || outcome == Outcome.ANSWERS_OVER_THE_CAP
                        || outcome == Outcome.NESTED_COMMITS || outcome == Outcome.NESTED_ROLLS_BACK
                        || (door.http() || door == Door.MANAGER) && outcome == Outcome.THROWS_KEPT;
                if (outcome == Outcome.CALLERS_TRANSACTION_TIMES_OUT) {
                    // As the reaper does at the timeout: rolled back from another thread, still this thread's. The work
                    // then writes nothing (a pool outside a server may let a dead transaction's statements autocommit;
                    // a server's refuses them), and answers: nothing of it may be kept.
                    jakarta.transaction.Transaction callers = env.tm.getTransaction();
                    racers.submit(() -> {
                        callers.rollback();
                        return null;
                    }).get(30, TimeUnit.SECONDS);
                    return "answer-" + n;
                }
                insert(row(k, n, answers ? Outcome.OK : outcome));
                Runnable then = midWork;
                if (then != null) {
                    midWork = null;
                    then.run();
                }
                switch (outcome) {
                    case THROWS_KEPT -> throw new ContractApplication.Kept("failure-" + n);
                    case THROWS_RELEASED -> throw new ContractApplication.Released("failure-" + n);
                    case ROLLBACK_ONLY, ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY -> env.tsr.setRollbackOnly();
                    case HOLDS_PAST_THE_STATEMENT_BOUND -> {
                        CountDownLatch held = holding;
                        if (held != null) {
                            held.countDown();
                        }
                        // the scenario's length: the claim stays held past the store's statement bound
                        Thread.sleep(Stack.STATEMENT_BOUND.toMillis() + 500);
                    }
                    case NESTED_ACK_COMMITS, NESTED_ACK_ROLLS_BACK, NESTED_ACK_COMMITS_THEN_ROLLBACK_ONLY -> {
                        org.eclipse.microprofile.reactive.messaging.Message<?> record = ContractApplication.RECORD.get();
                        ContractApplication.ACKNOWLEDGED_IN_A_BEAN.set(true);
                        ContractApplication.LEDGER.get().inItsOwnTransaction(() -> {
                            record.ack();
                            if (outcome == Outcome.NESTED_ACK_ROLLS_BACK) {
                                env.tsr.setRollbackOnly();
                            }
                        });
                        if (outcome == Outcome.NESTED_ACK_COMMITS_THEN_ROLLBACK_ONLY) {
                            env.tsr.setRollbackOnly();
                        }
                    }
                    case NESTED_COMMITS, NESTED_ROLLS_BACK, NESTED_COMMITS_THEN_ROLLBACK_ONLY -> {
                        nested(k, n, outcome == Outcome.NESTED_ROLLS_BACK);
                        if (outcome == Outcome.NESTED_COMMITS_THEN_ROLLBACK_ONLY) {
                            env.tsr.setRollbackOnly();
                        }
                    }
                    default -> {
                    }
                }
                return "answer-" + n;
            }

            @Override
            public byte[] response(String result) {
                return ("ok:" + result).getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public boolean keeps(Throwable failure) {
                return failure instanceof ContractApplication.Kept;
            }

            @Override
            public byte[] failure(Throwable failure) {
                return ("fail:" + failure.getMessage()).getBytes(StandardCharsets.UTF_8);
            }
        };
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** The record of a key of this schedule, as the door keeps it (the manager keeps responses under a namespace of its own). */
    ScopedKey key(int key) {
        return new ScopedKey(door == Door.MANAGER ? "idempotency-manager/responses" : ContractApplication.NAMESPACE, "anonymous",
                keyText(key));
    }

    String keyText(int key) {
        return prefix + "-k" + key;
    }

    /** The request a call makes: the manager knows none (a key has one response), so every call of a key is one request. */
    private String request(String request) {
        return door == Door.MANAGER ? "A" : request;
    }

    /** Which request the execution behind a kept answer ran for. */
    private String requestOf(IdempotencyRecord kept) {
        if (door == Door.RECORD && kept.status() == RecordStatus.COMPLETED) {
            // A consumer keeps no value: the execution behind its answer is the one whose work committed.
            return rows(kept.scopedKey()).stream().filter(r -> r.endsWith("#OK")).findFirst()
                    .map(r -> requestOfRun.get(r.split("#")[2])).orElse(null);
        }
        String text = text(kept);
        return requestOfRun.get(text.substring(text.lastIndexOf('-') + 1));
    }

    static String fingerprint(String request) {
        return "fp-" + request;
    }

    private AtomicInteger runs(ScopedKey k) {
        synchronized (runs) {
            return runs.computeIfAbsent(k.key(), x -> new AtomicInteger());
        }
    }

    private String row(ScopedKey k, String n, Outcome outcome) {
        return k.key() + "#" + epoch + "#" + n + "#" + outcome;
    }

    /**
     * The answer a record keeps, as the calls answered it: the bytes the engine doors and the manager stored, or a
     * method's JSON (a returned string, a kept failure's message).
     */
    String text(IdempotencyRecord r) {
        if (door == Door.RECORD && r.status() == RecordStatus.COMPLETED) {
            return RECORD_DONE; // a consumer's answer is that it ran: nothing else is kept
        }
        if (door == Door.HTTP_FILTER) {
            return HttpNode.text(r.response());
        }
        String raw = new String(r.response(), StandardCharsets.UTF_8);
        if (!door.cdi || door == Door.MANAGER) {
            return raw;
        }
        try (jakarta.json.JsonReader reader = jakarta.json.Json.createReader(new java.io.StringReader(raw))) {
            jakarta.json.JsonValue v = reader.readValue();
            return v instanceof jakarta.json.JsonString value ? "ok:" + value.getString()
                    : "fail:" + v.asJsonObject().getString("message");
        }
    }

    /** The key's finished, unexpired record in the store: the judge's answer. */
    IdempotencyRecord kept(ScopedKey k) {
        return store.find(k).filter(r -> r.isFinished() && !r.isExpired(clock.instant())).orElse(null);
    }

    /** A nested step's failure, which the work catches. */
    static final class NestedFailure extends RuntimeException {
        NestedFailure() {
            super("the nested step failed", null, false, false);
        }
    }

    /** The runs whose nested step committed (its row then stays, whatever the call's own transaction does). */
    private final Set<String> nestedCommitted = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** A nested step's row: {@code nested:<key>#<epoch>#<run>#COMMITS} or {@code #ROLLS_BACK}. */
    private String nestedRow(ScopedKey k, String n, boolean rollsBack) {
        return "nested:" + k.key() + "#" + epoch + "#" + n + (rollsBack ? "#ROLLS_BACK" : "#COMMITS");
    }

    /**
     * A bean the work calls writes a row in a transaction of its own ({@code REQUIRES_NEW}): through a CDI bean's
     * {@code @Transactional} where the door is a CDI container, by the transaction manager's suspend and begin otherwise;
     * {@code rollsBack}: the step then fails, its transaction rolls back, and the work goes on.
     */
    private void nested(ScopedKey k, String n, boolean rollsBack) throws Exception {
        String id = nestedRow(k, n, rollsBack);
        Runnable step = () -> {
            try {
                insert(id);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
            if (rollsBack) {
                throw new NestedFailure();
            }
        };
        try {
            ContractApplication.Ledger ledger = ContractApplication.LEDGER.get();
            if (ledger != null) {
                ledger.inItsOwnTransaction(step);
            } else {
                jakarta.transaction.Transaction outer = env.tm.suspend();
                try {
                    env.tm.begin();
                    try {
                        step.run();
                    } catch (RuntimeException e) {
                        env.tm.rollback();
                        throw e;
                    }
                    env.tm.commit();
                } finally {
                    if (outer != null) {
                        env.tm.resume(outer);
                    }
                }
            }
        } catch (NestedFailure expected) {
            return; // the work answers all the same
        }
        nestedCommitted.add(id);
    }

    /** This key's nested rows of the present lifetime. */
    private List<String> nestedRows(ScopedKey k) {
        return rowsLike("nested:" + k.key() + "#" + epoch + "#%");
    }

    private void insert(String id) throws SQLException {
        try (Connection c = env.dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 100)")) {
            ps.setString(1, id);
            ps.executeUpdate();
        }
    }

    /** This key's committed business rows of the present lifetime, read outside any transaction. */
    private List<String> rows(ScopedKey k) {
        return rowsLike(k.key() + "#" + epoch + "#%");
    }

    /** The committed business rows whose ids match a LIKE pattern, read outside any transaction. */
    private List<String> rowsLike(String pattern) {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = stack.reader.prepareStatement("select id from test_payment where id like ? order by id")) {
            ps.setString(1, pattern);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    private void require(boolean condition, String invariant) {
        if (!condition) {
            throw new AssertionError(invariant + "\n  mode " + mode + ", door " + door + ", cache " + cacheKind
                    + "\n  steps: " + steps);
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, "contract-" + name);
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void close() {
        for (Node n : door.singleNode() ? new Node[] {nodes[0]} : nodes) {
            if (n != null) {
                n.close();
            }
        }
        racers.shutdownNow();
        heartbeats.shutdownNow();
        afterCompletion.shutdown();
        rollback();
    }
}
