package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.cache.LocalRecordCache;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.testing.TestDatabase;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The first-answer contract over generated fault schedules, on H2, PostgreSQL and MariaDB: every claim mode, every door an application reaches
 * the engine through (an {@code @Idempotent} method with and without the caller's transaction, the functional API and
 * the manager, each node then a CDI container with the library's extension; the HTTP filter, on one node of RESTEasy,
 * Undertow and Weld; and the engine called as they and the HTTP filter call it), every cache state (none, one per node, one shared by the nodes as a replicated cache is,
 * guarded as the library guards a clustered cache: bounded, bypassed while it fails, written off the caller's thread),
 * two nodes over one database; random steps of first calls, retries of the same and of another request, concurrent
 * duplicates on both nodes, caches flushed, the shared cache cut off (its calls failing as a partition's do) and back,
 * nodes restarted, callers rolling back, transactions marked for rollback,
 * failures kept and released, writers failing, the clock stepped past a lease and past the records' time to live.
 * After every step {@link World#check} holds the invariants (see {@link World}); a failure is shrunk by jqwik to the
 * shortest schedule that still breaks one, printed with its seed.
 *
 * <p>CI runs the tries of {@code jqwik.tries.default} ({@code src/test/resources/junit-platform.properties}); to run it
 * longer, {@code mvn test -Dtest=H2FirstAnswerContractTest -Djqwik.tries.default=20000} (CONTRIBUTING.md, "The
 * first-answer contract").
 */
abstract class FirstAnswerContract {

    /** The database this class's schedules run on. */
    abstract TestDatabase database();

    static Stack stack;
    static World current;

    /** Schedules run and their steps, printed when the suite ends. */
    static final java.util.concurrent.atomic.AtomicLong schedules = new java.util.concurrent.atomic.AtomicLong();
    static final java.util.concurrent.atomic.AtomicLong steps = new java.util.concurrent.atomic.AtomicLong();

    @AfterContainer
    static void stop() {
        System.out.println("The first-answer contract" + (stack == null ? "" : " on " + stack.database) + ": "
                + schedules.getAndSet(0) + " schedules, " + steps.getAndSet(0) + " steps, the invariants checked after each");
        if (stack != null) {
            stack.close();
            stack = null;
        }
    }

    @AfterTry
    void closeWorld() {
        if (current != null) {
            current.close();
            current = null;
        }
    }

    @Property(shrinking = net.jqwik.api.ShrinkingMode.FULL)
    void theFirstAnswerHolds(@ForAll("schedules") ActionChain<World> schedule) {
        World world = schedule.withInvariant("first answer", World::check).run();
        schedules.incrementAndGet();
        steps.addAndGet(world.steps.size());
        net.jqwik.api.statistics.Statistics.label("mode, door, cache").collect(world.mode, world.door, world.cacheKind,
                world.policy.waitForResult() ? "WAIT" : "REJECT");
        world.slow.forEach(slow -> net.jqwik.api.statistics.Statistics.label("steps over a second").collect(slow));
        net.jqwik.api.statistics.Statistics.label("steps").collect(world.steps.size() < 8 ? "under 8" : world.steps.size() < 16 ? "8 to 15" : "16 to 24");
    }

    /** The set-up (mode, door, cache) is drawn first; the steps then run against it. */
    @Provide
    Arbitrary<ActionChain<World>> schedules() {
        // One world in ten on PostgreSQL and MariaDB bounds each store statement by 2 s (H2's driver has no network
        // timeout), and then duplicates wait on a first call that holds its claim longer than that.
        Arbitrary<Boolean> bounded = database() == TestDatabase.H2 ? Arbitraries.just(false)
                : Arbitraries.frequency(net.jqwik.api.Tuple.of(9, false), net.jqwik.api.Tuple.of(1, true));
        return Combinators.combine(only("contract.mode", ClaimMode.class, ClaimMode.ATOMIC, ClaimMode.OPTIMISTIC, ClaimMode.LEASED),
                        only("contract.door", Door.class, Door.values()), only("contract.cache", CacheKind.class, CacheKind.values()),
                        Arbitraries.of(World.REJECT, World.WAIT), bounded)
                .flatAs((mode, door, cache, policy, boundedStatements) -> ActionChain.<World>startWith(
                                () -> newWorld(mode, door, cache, policy, boundedStatements && door != Door.HTTP_FILTER && door != Door.MANAGER))
                        .withAction(6, new CallStep())
                        .withAction(2, new RaceStep())
                        .withAction(2, new LongWaitStep())
                        .withAction(1, new AfterADuplicateStep())
                        .withAction(1, Action.just("flush a cache", Transformer.mutate("flush the cache of node 0", w -> w.flush(0))))
                        .withAction(1, Action.just("flush the other cache", Transformer.mutate("flush the cache of node 1", w -> w.flush(1))))
                        .withAction(1, Action.just("restart a node", Transformer.mutate("restart node 0", w -> w.restart(0))))
                        .withAction(1, Action.just("cut the shared cache", Transformer.mutate("the shared cache's members stop answering", w -> w.cut(true))))
                        .withAction(1, Action.just("heal the shared cache", Transformer.mutate("the shared cache answers again", w -> w.cut(false))))
                        .withAction(1, new ManageStep())
                        .withAction(1, new ExportStep())
                        .withAction(1, new ImportStep())
                        .withAction(6, new SightStep())
                        .withAction(1, Action.just("a few seconds pass", Transformer.mutate("clock +3 s", w -> w.step(Duration.ofSeconds(3)))))
                        .withAction(1, Action.just("step past the lease", Transformer.mutate("clock +45 s", w -> w.step(Duration.ofSeconds(45)))))
                        .withAction(1, Action.just("step past the ttl", Transformer.mutate("clock +2 h (past the ttl)", w -> w.step(Duration.ofHours(2)))))
                        .withMaxTransformations(24));
    }

    /**
     * The values to draw from: all of them, or the ones a system property names (comma-separated), to hunt a failure
     * seen in one set-up, e.g. {@code -Dcontract.mode=OPTIMISTIC -Dcontract.cache=SHARED}.
     */
    @SafeVarargs
    static <E extends Enum<E>> Arbitrary<E> only(String property, Class<E> type, E... all) {
        String named = System.getProperty(property, "").strip();
        if (named.isEmpty()) {
            return Arbitraries.of(all);
        }
        return Arbitraries.of(java.util.Arrays.stream(named.split(",")).map(String::strip).map(name -> Enum.valueOf(type, name)).toList());
    }

    World newWorld(ClaimMode mode, Door door, CacheKind cache, dev.idempotency.core.Policy policy, boolean boundedStatements) {
        if (current != null) {
            current.close();
        }
        if (stack == null) {
            stack = Stack.open(database());
        }
        current = stack.world(mode, door, cache, boundedStatements);
        current.policy = policy;
        return current;
    }

    /** One call, on a random node, of one of three keys, by one of two requests, ending as drawn. */
    static final class CallStep implements Action.Dependent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 2),
                            Arbitraries.frequency(net.jqwik.api.Tuple.of(5, "A"), net.jqwik.api.Tuple.of(1, "B")), Arbitraries.of(world.outcomes()))
                    .as((node, key, request, outcome) -> Transformer.mutate(
                            "node " + node + " calls k" + key + " as request " + request + ", " + outcome,
                            w -> w.call(node, key, request, outcome)));
        }
    }

    /**
     * Two or three concurrent duplicates of one key, on both nodes: one ends as drawn, the others well; now and then the
     * second is another request (another body) with the same key.
     */
    static final class RaceStep implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(2, 3),
                            Arbitraries.of(Outcome.OK, Outcome.THROWS_KEPT, Outcome.THROWS_RELEASED), Arbitraries.of(true, false),
                            Arbitraries.frequency(net.jqwik.api.Tuple.of(4, false), net.jqwik.api.Tuple.of(1, true)))
                    .as((key, n, first, oneNode, mixed) -> Transformer.mutate(n + " duplicates of k" + key + " at once"
                            + (oneNode ? " on one node" : " on both nodes") + ", one of them " + first
                            + (mixed ? ", one of them another request" : ""),
                            w -> w.race(key, n, first, oneNode, mixed)));
        }
    }

    /**
     * A call whose caller's transaction (where the door has one) began and read before a duplicate on the other node
     * committed; the call comes after, ending as drawn.
     */
    static final class AfterADuplicateStep implements Action.Dependent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 2), Arbitraries.of(world.outcomes()))
                    .as((node, key, outcome) -> Transformer.mutate("node " + node + " calls k" + key + ", " + outcome
                            + ", after the other node's duplicate committed", w -> w.callAfterADuplicateCommits(node, key, outcome)));
        }
    }

    /**
     * In a world whose store bounds its statements: a first call holds its claim past the bound while a duplicate on
     * the other node waits for its outcome (in the caller's transaction, where the door has one).
     */
    static final class LongWaitStep implements Action.Dependent<World> {
        @Override
        public boolean precondition(World world) {
            return world.store != stack.env.store;
        }

        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Arbitraries.integers().between(0, 2).map(key -> Transformer.mutate(
                    "a duplicate of k" + key + " waits past the statement bound",
                    w -> w.race(key, 2, Outcome.HOLDS_PAST_THE_STATEMENT_BOUND, false, false)));
        }
    }

    /** An operator, between the calls, on a node: every record deleted, or exported, deleted and imported again. */
    static final class ManageStep implements Action.Dependent<World> {
        @Override
        public boolean precondition(World world) {
            return world.manageable();
        }

        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.of(false, true))
                    .as((node, restore) -> Transformer.mutate((restore ? "restore the records on node " : "delete every record on node ") + node,
                            w -> w.manage(node, restore)));
        }
    }

    /** An operator exports the records on a node while a call runs on the other (its claim, where committed, in the export). */
    static final class ExportStep implements Action.Dependent<World> {
        @Override
        public boolean precondition(World world) {
            return world.manageable();
        }

        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 2),
                            Arbitraries.of(Outcome.OK, Outcome.THROWS_RELEASED))
                    .as((node, key, outcome) -> Transformer.mutate("node " + node + " exports while k" + key + " runs, " + outcome,
                            w -> w.exportDuringCall(node, key, outcome)));
        }
    }

    /** An operator imports the export taken earlier on a node while the other node calls a key. */
    static final class ImportStep implements Action.Dependent<World> {
        @Override
        public boolean precondition(World world) {
            return world.manageable() && world.canImportOlder();
        }

        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 2))
                    .as((node, key) -> Transformer.mutate("node " + node + " imports the earlier export while k" + key + " is called",
                            w -> w.importOlder(node, key)));
        }
    }

    /** {@code IdempotencyManager.check} of one of two sighting ids, on a node (the manager's door). */
    static final class SightStep implements Action.Dependent<World> {
        @Override
        public boolean precondition(World world) {
            return world.sights();
        }

        @Override
        public Arbitrary<Transformer<World>> transformer(World world) {
            return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 1))
                    .as((node, id) -> Transformer.mutate("node " + node + " checks sighting " + id, w -> w.sight(node, id)));
        }
    }

    /** How the application reaches the engine. */
    enum Door {
        /** The engine's run, as a method with no transaction of the caller's is claimed. */
        METHOD(false, false),
        /** The same, inside the caller's transaction, committed or rolled back after. */
        METHOD_IN_CALLERS_TRANSACTION(true, false),
        /** The engine's hold, run and settle, as the HTTP filter claims a request: the key held, the resource run, its response written, then the claim settled. */
        HTTP(false, false),
        /** An {@code @Idempotent} method of a CDI bean, with no transaction of the caller's, through the library's interceptor. */
        INTERCEPTOR(false, true),
        /** The same, inside the caller's transaction ({@code @Transactional} around it), committed or rolled back after. */
        INTERCEPTOR_IN_CALLERS_TRANSACTION(true, true),
        /**
         * An {@code @Idempotent} method through the interceptor of a container that runs the library's build compatible
         * extension alone, as a CDI Lite container does (Quarkus's ArC): the beans, the interceptor's priority and every
         * method's settings come from it, the configuration from the application's MicroProfile Config.
         */
        INTERCEPTOR_CDI_LITE(false, true),
        /** {@code Idempotency.call}, with the mode and duplicate policy as options. */
        FUNCTIONAL(false, true),
        /**
         * {@code IdempotencyManager}, as a gateway uses it: check, run, store (claiming nothing: the mode does not apply,
         * and duplicates that arrive together may each run; once a response is stored, none runs again).
         */
        MANAGER(false, true),
        /**
         * The HTTP filter itself: {@code POST} requests with an {@code Idempotency-Key} to a JAX-RS resource (RESTEasy,
         * Undertow, Weld, the library's JPA store over the schedule's pool). One node: the runtime's CDI container has a
         * fixed name, so its nodes cannot run side by side; its steps on "both nodes" are on that one.
         */
        HTTP_FILTER(false, false),
        /**
         * An {@code @Incoming} method of a Kafka consumer, called as SmallRye Reactive Messaging calls it: a
         * {@code Message<String>} whose record carries the key in a header; the method runs the work and acknowledges the
         * record. Its answer is the acknowledgement: a record run and committed, or a duplicate acknowledged without
         * running; a kept failure refused again on every duplicate ({@code keptFailures=nack}), so that its answer is seen.
         */
        RECORD(false, true);

        /** Whether the call runs inside a transaction of the caller's. */
        final boolean callersTransaction;
        /** Whether each node is a CDI container with the library's extension (else the engine is called directly). */
        final boolean cdi;

        Door(boolean callersTransaction, boolean cdi) {
            this.callersTransaction = callersTransaction;
            this.cdi = cdi;
        }

        /** Whether the door's world has one node. */
        boolean singleNode() {
            return this == HTTP_FILTER;
        }

        /** Whether the door answers over HTTP (a status the method keeps, a writer that fails). */
        boolean http() {
            return this == HTTP || this == HTTP_FILTER;
        }
    }

    enum CacheKind {
        /** No cache: the store answers every duplicate. */
        NONE,
        /** The default: a cache of each node's own (its "absent" says nothing of the other node, or of a restart). */
        PER_NODE,
        /** One cache both nodes see, with markers (what a replicated or remote cache is to the engine). */
        SHARED
    }

    /** How one call of the work ends. */
    enum Outcome {
        /** Writes its row, answers. */
        OK,
        /** Writes its row, throws an exception the method keeps as its answer ({@code keepOn}). */
        THROWS_KEPT,
        /** Writes its row, throws an exception that frees the key. */
        THROWS_RELEASED,
        /** Writes its row, marks its transaction for rollback, answers. */
        ROLLBACK_ONLY,
        /** Writes its row and answers; then the caller's transaction rolls back. */
        CALLER_ROLLS_BACK,
        /** HTTP: writes its row and answers; then the response's writer throws. */
        WRITER_FAILS,
        /**
         * Writes its row and answers, but meanwhile the caller's transaction timed out: rolled back by the transaction
         * manager's reaper, from its own thread, while the call still runs on the caller's.
         */
        CALLERS_TRANSACTION_TIMES_OUT,
        /**
         * A consumer: writes its row, then a bean it calls acknowledges the record in a transaction of its own
         * ({@code REQUIRES_NEW}) that commits; the method does not acknowledge it again.
         */
        NESTED_ACK_COMMITS,
        /**
         * A consumer: writes its row, then a bean it calls acknowledges the record in a transaction of its own that rolls
         * back: part of the work did not happen, so the call fails and the record is refused, to come again.
         */
        NESTED_ACK_ROLLS_BACK,
        /**
         * A consumer: writes its row, a bean acknowledges the record in a transaction of its own that commits, then the
         * call's own transaction is marked for rollback: the record is refused, its work not kept.
         */
        NESTED_ACK_COMMITS_THEN_ROLLBACK_ONLY,
        /**
         * Writes its row, then a bean it calls writes a row of its own in a transaction of its own ({@code REQUIRES_NEW})
         * that commits; answers. The bean's row is outside the claim: it stays whatever the call's transaction does.
         */
        NESTED_COMMITS,
        /**
         * Writes its row, then a bean it calls writes a row in a transaction of its own and fails, rolling that
         * transaction back; the work catches the failure and answers: the call's own transaction commits, the bean's row
         * never does.
         */
        NESTED_ROLLS_BACK,
        /**
         * Writes its row, a bean writes its row in a transaction of its own that commits, then the call's own transaction
         * is marked for rollback: the call's row and answer are not kept, the key is free, the bean's row stays (a retry
         * runs it again: a step in a transaction of its own is not part of the claim).
         */
        NESTED_COMMITS_THEN_ROLLBACK_ONLY,
        /**
         * Writes its row, then holds its transaction (and its claim) open past the store's statement bound before it
         * answers: a duplicate meanwhile waits on it longer than any plain statement may take.
         */
        HOLDS_PAST_THE_STATEMENT_BOUND,
        /** HTTP: writes its row and answers a body over the filter's size cap (kept without it, before it is sent). */
        ANSWERS_OVER_THE_CAP,
        /** HTTP: writes its row, marks its transaction for rollback, answers a body over the cap: none of it is sent. */
        ANSWERS_OVER_THE_CAP_ROLLBACK_ONLY
    }
}
