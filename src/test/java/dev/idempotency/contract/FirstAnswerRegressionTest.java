package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.contract.FirstAnswerContract.CacheKind;
import dev.idempotency.contract.FirstAnswerContract.Door;
import dev.idempotency.contract.FirstAnswerContract.Outcome;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.function.Consumer;

/**
 * Schedules the generated suite ({@link FirstAnswerContract}) once shrank to, kept as named tests: each failed
 * before the fix it names, and every step is followed by the contract's invariants ({@link World#check}).
 */
class FirstAnswerRegressionTest {

    static Stack stack;
    World world;

    @BeforeAll
    static void start() {
        stack = Stack.open(dev.idempotency.testing.TestDatabase.H2);
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @AfterEach
    void close() {
        if (world != null) {
            world.close();
        }
    }

    private void run(ClaimMode mode, Door door, CacheKind cache, Consumer<World> steps) {
        world = stack.world(mode, door, cache);
        world.afterEveryStep(World::check);
        steps.accept(world);
    }

    /**
     * An optimistic key answered, then its cache emptied: the retry was run again (its work rolled back on the record's
     * unique key) and answered "in progress" in the caller's transaction and over HTTP, until the key expired. Now the
     * store is read before the work runs, and the retry is replayed.
     */
    @ParameterizedTest
    @EnumSource(Door.class)
    void anOptimisticRetryAfterTheCacheWasFlushedIsReplayedNotRunAgain(Door door) {
        run(ClaimMode.OPTIMISTIC, door, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.OK);
            w.flush(0);
            w.call(0, 0, "A", Outcome.OK);
        });
    }

    /** The same after the node restarted (a new engine, an empty cache, over the same database). */
    @ParameterizedTest
    @EnumSource(Door.class)
    void anOptimisticRetryAfterARestartIsReplayedNotRunAgain(Door door) {
        run(ClaimMode.OPTIMISTIC, door, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.OK);
            w.restart(0);
            w.call(0, 0, "A", Outcome.OK);
        });
    }

    /** The same on another node of the default cache (each node's own), and for a kept failure, and for duplicates at once. */
    @ParameterizedTest
    @EnumSource(Door.class)
    void anOptimisticRetryOnAnotherNodeIsReplayedNotRunAgain(Door door) {
        run(ClaimMode.OPTIMISTIC, door, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.OK);
            w.call(1, 0, "A", Outcome.OK);
            w.call(1, 0, "B", Outcome.OK);
            w.call(0, 1, "A", Outcome.THROWS_KEPT);
            w.call(1, 1, "A", Outcome.OK);
            w.restart(0);
            w.race(0, 3, Outcome.OK, false);
        });
    }

    /**
     * A leased call inside the caller's transaction, which the transaction manager's reaper rolled back at its timeout
     * while the call ran (the transaction still the thread's): its completion took "no transaction" for "none to join"
     * and committed the record COMPLETED on its own, so a retry was replayed a success whose work never committed. Now
     * the key is released, and the retry runs.
     */
    @org.junit.jupiter.api.Test
    void aLeasedCallWhoseCallersTransactionTimedOutKeepsNothing() {
        run(ClaimMode.LEASED, Door.METHOD_IN_CALLERS_TRANSACTION, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.CALLERS_TRANSACTION_TIMES_OUT);
            w.call(1, 0, "A", Outcome.OK);
            w.call(0, 0, "A", Outcome.OK);
        });
    }

    /**
     * A gateway on the manager: a response stored on one node, then checked on the other, whose own cache had seen the id
     * before but not the response: "no response stored", and the gateway ran its work again (found on H2, default
     * cache). Now the store answers whenever the cache knows of no response.
     */
    @org.junit.jupiter.api.Test
    void aResponseStoredThroughTheManagerOnOneNodeIsSeenOnTheOther() {
        run(ClaimMode.LEASED, Door.MANAGER, CacheKind.PER_NODE, w -> {
            w.call(1, 0, "A", Outcome.THROWS_RELEASED); // node 1 sees k0; nothing is stored
            w.call(0, 0, "A", Outcome.OK); // node 0 runs and stores
            w.call(1, 0, "A", Outcome.OK); // node 1's check: stored
        });
    }

    /**
     * The same through a cache the nodes share, emptied: duplicates checked at once on one node, the first reading the
     * id's sighting from the store and caching it (without its note that a response exists) before the others asked the
     * cache, which then knew the id and no response: they ran the work again (found on PostgreSQL). Raced ten times.
     */
    @org.junit.jupiter.api.Test
    void duplicatesOnTheManagerAfterAFlushAreAnsweredTheStoredResponse() {
        run(ClaimMode.LEASED, Door.MANAGER, CacheKind.SHARED, w -> {
            w.call(1, 0, "A", Outcome.THROWS_KEPT); // stored: the failure the gateway keeps
            for (int i = 0; i < 10; i++) {
                w.flush(1);
                w.race(0, 3, Outcome.OK, true);
            }
        });
    }

    /**
     * Two stores through the manager at once with different bytes: the second was told "another response is stored"
     * while the first had not finished, and its retrieve found none (found on H2, one race). Now it is "in progress",
     * and the gateway awaits the first.
     */
    @org.junit.jupiter.api.Test
    void racingStoresThroughTheManagerAnswerTheFirst() {
        run(ClaimMode.LEASED, Door.MANAGER, CacheKind.NONE, w -> {
            for (int key = 0; key < 3; key++) {
                w.race(key, 3, Outcome.THROWS_KEPT, false);
            }
        });
    }

    /**
     * Optimistic claims over HTTP on two nodes whose markers cannot see each other, two requests with one key (another
     * body) at once: the one whose insert met the other's row still uncommitted waited for it, found another request's
     * answer, and was told "in progress" (409) though it waited (WAIT), as every retry would be; the filter turned the
     * same finding on a committed row into 503. Now it is refused as reused (422). Found on PostgreSQL; raced ten times.
     */
    @org.junit.jupiter.api.Test
    void anOptimisticRequestThatLostItsKeyToAnotherRequestIsRefusedAsReused() {
        run(ClaimMode.OPTIMISTIC, Door.HTTP, CacheKind.PER_NODE, w -> {
            w.policy = World.WAIT;
            for (int i = 0; i < 10; i++) {
                w.race(i % 3, 3, Outcome.OK, false, true);
                if (i % 3 == 2) {
                    w.step(java.time.Duration.ofHours(2)); // the keys are new again
                }
            }
        });
    }

    /**
     * Sightings taking turns on two nodes of a shared cache: each node's "last seen" is the other's latest sighting. A
     * sighting answered from the cache did not move the cached entry (it kept the first), so the third answered the time
     * since the first.
     */
    @org.junit.jupiter.api.Test
    void sightingsOnTwoNodesOfASharedCacheAgreeOnLastSeen() {
        run(ClaimMode.ATOMIC, Door.MANAGER, CacheKind.SHARED, w -> {
            for (int i = 0; i < 4; i++) {
                w.sight(i % 2, 0);
                w.step(java.time.Duration.ofSeconds(3));
            }
        });
    }

    /**
     * An operator deletes every record between calls, then restores an export: after the deletion no node answers a
     * deleted answer (from its cache or the store), the next call runs; after the restore every key keeps its answer.
     */
    @ParameterizedTest
    @EnumSource(value = Door.class, names = {"METHOD", "INTERCEPTOR", "MANAGER", "RECORD"})
    void anOperatorsDeletionAndRestoreBetweenCalls(Door door) {
        for (CacheKind cache : new CacheKind[] {CacheKind.NONE, CacheKind.SHARED}) {
            run(ClaimMode.ATOMIC, door, cache, w -> {
                w.call(0, 0, "A", Outcome.OK);
                w.call(1, 0, "A", Outcome.OK);
                w.manage(0, false);
                w.call(1, 0, "A", Outcome.OK);
                w.call(0, 0, "A", Outcome.OK);
                w.manage(1, true);
                w.call(0, 0, "A", Outcome.OK);
                w.call(1, 0, "A", Outcome.OK);
            });
            world.close();
            world = null;
        }
    }

    /**
     * Answers over the HTTP filter's size cap, in each claim mode: sent whole once kept (status and headers), replayed
     * without the body; one whose transaction was marked for rollback sends none of itself (a 500), and its retry runs.
     * The success's body went out before the commit decided, before the answer was kept first.
     */
    @ParameterizedTest
    @EnumSource(value = ClaimMode.class, names = {"ATOMIC", "OPTIMISTIC", "LEASED"})
    void answersOverTheCapAreSentOnlyOnceKept(ClaimMode mode) {
        run(mode, Door.HTTP_FILTER, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.ANSWERS_OVER_THE_CAP);
            w.call(0, 0, "A", Outcome.OK);
            if (mode != ClaimMode.LEASED) {
                w.call(0, 1, "A", Outcome.ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY);
                w.call(0, 1, "A", Outcome.OK);
                w.call(0, 1, "A", Outcome.OK);
            }
        });
    }

    /**
     * A sighting on one node just after a restore (its clear) on the other: the shared cache does not take a record
     * within the clear's clock margin, so the store answered it, and learnt it only a second later; the other node's
     * sighting, from the store, answered the time since the one before. Found by the generated suite (1,374th schedule).
     */
    @org.junit.jupiter.api.Test
    void aSightingJustAfterARestoreIsSeenOnTheOtherNode() {
        run(ClaimMode.ATOMIC, Door.MANAGER, CacheKind.SHARED, w -> {
            w.sight(0, 0);
            w.step(java.time.Duration.ofSeconds(6));
            w.manage(0, true);
            w.sight(1, 0);
            w.sight(0, 0);
        });
    }

    /**
     * A sighting on one node, then a restore (export, delete every record, import) on that node at once: the sighting
     * was in the cache and in the node's batch for the store, not yet in the store, so the export carried the "last
     * seen" before it, the restore wrote that back and cleared the cache, and the other node answered the older age.
     * Found by the generated suite (MariaDB, 1,462nd schedule). Now an export first writes the node's sightings.
     */
    @org.junit.jupiter.api.Test
    void aRestoreOnTheNodeThatJustSawASightingKeepsItsLastSeen() {
        run(ClaimMode.OPTIMISTIC, Door.MANAGER, CacheKind.SHARED, w -> {
            w.sight(0, 0);
            w.step(java.time.Duration.ofSeconds(3));
            w.restart(0);
            w.call(1, 0, "B", Outcome.NESTED_COMMITS);
            w.step(java.time.Duration.ofSeconds(45));
            w.restart(0);
            w.sight(1, 0);
            w.call(1, 1, "A", Outcome.THROWS_KEPT);
            w.sight(1, 0);
            w.manage(1, true);
            w.sight(0, 0);
        });
    }

    /**
     * An export taken while a leased call held its claim, imported after the call had finished: the import wrote the
     * stale claim over the kept answer, and the key answered nothing (its work would have run again once the lease
     * lapsed). Found by the generated suite as soon as it exported and imported while calls ran. Now an import writes
     * no claim, nor one of a call that gave its key up (its key would answer "in progress" until the lease lapsed).
     */
    @ParameterizedTest
    @EnumSource(value = Door.class, names = {"METHOD", "METHOD_IN_CALLERS_TRANSACTION", "INTERCEPTOR_IN_CALLERS_TRANSACTION", "FUNCTIONAL"})
    void anImportOfAnExportThatCaughtAClaimKeepsTheAnswerSince(Door door) {
        run(ClaimMode.LEASED, door, CacheKind.SHARED, w -> {
            w.exportDuringCall(0, 2);
            w.exportDuringCall(1, 1, Outcome.THROWS_RELEASED); // a claim whose call gave the key up: nothing to import either
            w.importOlder(0, 0);
            w.call(1, 2, "A", Outcome.OK);
            w.call(0, 1, "A", Outcome.OK);
        });
    }

    /**
     * An export holding a record that had expired by the time it was imported, over the key's answer of its next life:
     * the import wrote the expired record, and the key was new again (its work ran a second time in that life). Found by
     * the generated suite. Now an import writes no expired record, and never an answer older than the key's own.
     */
    @org.junit.jupiter.api.Test
    void anImportOfAnExpiredRecordKeepsTheKeysNewerAnswer() {
        run(ClaimMode.ATOMIC, Door.METHOD, CacheKind.NONE, w -> {
            w.call(0, 2, "A", Outcome.OK);
            w.step(java.time.Duration.ofHours(2));
            w.exportDuringCall(0, 0);
            w.call(1, 2, "A", Outcome.THROWS_KEPT);
            w.importOlder(1, 1);
            w.call(0, 2, "A", Outcome.OK);
        });
    }

    /**
     * A bean the work calls writes a row in a transaction of its own: committed, it stays whatever the call's own
     * transaction does; rolled back (its failure caught by the work), the call's own work and answer are still kept.
     */
    @ParameterizedTest
    @EnumSource(value = Door.class, names = {"METHOD", "METHOD_IN_CALLERS_TRANSACTION", "HTTP", "INTERCEPTOR",
            "INTERCEPTOR_IN_CALLERS_TRANSACTION", "FUNCTIONAL", "HTTP_FILTER"})
    void aNestedTransactionInsideTheCall(Door door) {
        run(ClaimMode.ATOMIC, door, CacheKind.PER_NODE, w -> {
            w.call(0, 0, "A", Outcome.NESTED_COMMITS);
            w.call(1, 0, "A", Outcome.OK);
            w.call(0, 1, "A", Outcome.NESTED_ROLLS_BACK);
            w.call(0, 1, "A", Outcome.OK);
            w.call(0, 2, "A", Outcome.NESTED_COMMITS_THEN_ROLLBACK_ONLY);
            w.call(0, 2, "A", Outcome.OK);
        });
    }

    /**
     * An operator's deletion while the shared cache's members do not answer: the tombstones cannot be written, so nothing
     * is deleted (the other node would go on answering the records from its copy); once the cache answers, it is.
     */
    @ParameterizedTest
    @EnumSource(value = Door.class, names = {"METHOD", "MANAGER", "FUNCTIONAL"})
    void aDeletionWhileTheSharedCacheIsCutDeletesNothing(Door door) {
        run(ClaimMode.ATOMIC, door, CacheKind.SHARED, w -> {
            w.call(0, 0, "A", Outcome.OK);
            w.call(1, 0, "A", Outcome.OK);
            w.cut(true);
            w.manage(0, false);
            w.manage(1, true);
            w.call(1, 0, "A", Outcome.OK);
            w.cut(false);
            w.manage(0, false);
            w.call(1, 0, "A", Outcome.OK);
        });
    }
}
