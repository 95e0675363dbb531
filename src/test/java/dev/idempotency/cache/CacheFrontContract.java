package dev.idempotency.cache;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The cache in front of the store, on one node: the JPA store on H2 with a cache of the node's own in front (each
 * subclass's kind). Statements are counted with Hibernate's statistics: a duplicate of a finished key runs none.
 */
abstract class CacheFrontContract {

    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);

    final FakeClock clock = new FakeClock();
    JtaEnvironment env;
    ManagedRecordCache cache;
    IdempotencyEngine engine;
    final java.util.List<AutoCloseable> started = new java.util.ArrayList<>();

    /** A cache of this node's own, in front of the store, closed after the test (by {@link #started}). */
    abstract ManagedRecordCache newCache(String node, int port, FakeClock clock, LocalCompletionSignals signals);

    @BeforeEach
    void start() {
        TestDatabase.H2.reset();
        env = new JtaEnvironment(TestDatabase.H2, Map.of("hibernate.generate_statistics", "true"));
        LocalCompletionSignals signals = new LocalCompletionSignals();
        cache = newCache("node-a", 7800, clock, signals);
        engine = new IdempotencyEngine(env.store, clock, "node-a", env.bridge(), signals, Executors.newSingleThreadExecutor(),
                Duration.ofSeconds(10), cache);
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).close();
        }
        env.close();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    Ticket claim(ScopedKey key, String fp) {
        return ((Decision.Proceed) engine.begin(key, fp, null, POLICY)).ticket();
    }

    /**
     * IdempotencyManager's "last seen" on two nodes whose caches are their own (local mode): node A's cached sighting
     * is trusted for a bounded time only; after it, A reads from the store the sighting node B recorded there.
     */
    @Test
    void aSightingInACacheOfTheNodesOwnIsTrustedForABoundedTimeThenTheStoreAnswersWithTheOtherNodes() {
        LocalCompletionSignals signalsB = new LocalCompletionSignals();
        ManagedRecordCache cacheB = newCache("node-b", 7801, clock, signalsB);
        IdempotencyEngine b = new IdempotencyEngine(env.store, clock, "node-b", env.bridge(), signalsB,
                Executors.newSingleThreadExecutor(), Duration.ofSeconds(10), cacheB);
        Duration bound = Duration.ofMillis(300);
        engine.recordSightingsWith(null, Duration.ofSeconds(1), bound); // no schedule: each sighting written at once
        b.recordSightingsWith(null, Duration.ofSeconds(1), bound);
        ScopedKey id = new ScopedKey("idempotency-manager/seen", "anonymous", "seen-on-two");
        Instant first = clock.instant();
        assertThat(engine.sight(id, null, POLICY).seenBefore()).isFalse();
        clock.advance(Duration.ofSeconds(2));
        Instant onB = clock.instant();
        assertThat(b.sight(id, null, POLICY).lastSeen()).contains(first);
        clock.advance(Duration.ofSeconds(3));
        assertThat(engine.cached(id)).as("A's own sighting, cached").isPresent();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (cache.holds(id)) { // the cache's expiry, in real time
            assertThat(System.nanoTime()).as("A's cached sighting expires after %s", bound).isLessThan(deadline);
            Thread.onSpinWait();
        }
        var sighting = engine.sight(id, null, POLICY);
        assertThat(sighting.fromCache()).isFalse();
        assertThat(sighting.lastSeen()).as("B's sighting, from the store").contains(onB);
    }

    @Test
    void aDuplicateOfAFinishedKeyRunsNoSql() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k1");
        engine.complete(claim(key, "fp"), bytes("receipt"));
        long before = env.statements();
        Decision d = engine.begin(key, "fp", null, POLICY);
        assertThat(env.statements()).isEqualTo(before);
        assertThat(((Decision.Replay) d).record().response()).isEqualTo(bytes("receipt"));
        assertThatThrownBy(() -> engine.begin(key, "other", null, POLICY)).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(env.statements()).as("a mismatch is answered from the cache too").isEqualTo(before);
    }

    @Test
    void aKeptFailureIsCachedToo() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k2");
        engine.fail(claim(key, "fp"), bytes("declined"));
        long before = env.statements();
        assertThat(((Decision.Replay) engine.begin(key, "fp", null, POLICY)).record().status()).isEqualTo(RecordStatus.FAILED);
        assertThat(env.statements()).isEqualTo(before);
    }

    @Test
    void aMissAlwaysAsksTheStoreAndAFlushedCacheNeverMakesAKeyNew() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k3");
        engine.complete(claim(key, "fp"), bytes("receipt"));
        cache.clear();
        clock.advance(Duration.ofSeconds(1)); // a read started in the clear's own instant may predate it: not cached
        long before = env.statements();
        assertThat(engine.begin(key, "fp", null, POLICY)).isInstanceOf(Decision.Replay.class);
        assertThat(env.statements()).as("the store answered").isGreaterThan(before);
        long after = env.statements();
        assertThat(engine.begin(key, "fp", null, POLICY)).isInstanceOf(Decision.Replay.class);
        assertThat(env.statements()).as("and the cache learnt it").isEqualTo(after);
    }

    @Test
    void anEntryNeverOutlivesItsRecord() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k4");
        engine.complete(claim(key, "fp"), bytes("old"));
        clock.advance(Duration.ofHours(1));
        Decision d = engine.begin(key, "new-fp", null, POLICY);
        assertThat(d).as("expired: treated as absent, by the cache as by the store").isInstanceOf(Decision.Proceed.class);
    }

    @Test
    void aReleasedKeyIsNotAnsweredFromTheCache() throws Exception {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k5");
        env.tm.begin();
        Ticket t = claim(key, "fp");
        engine.complete(t, bytes("receipt"));
        // Filled, as by a node that saw this key finished: the release must take it out.
        cache.put(t.finished(RecordStatus.COMPLETED, bytes("receipt"), clock.instant()));
        assertThat(cache.get(key)).isPresent();
        env.tm.rollback();
        assertThat(cache.get(key)).isEmpty();
        assertThat(engine.begin(key, "fp", null, POLICY)).isInstanceOf(Decision.Proceed.class);
    }

    /** A deleted record leaves the (filled) cache; its key then runs again. */
    @Test
    void aDeletedRecordLeavesTheCache() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k6");
        engine.complete(claim(key, "fp"), bytes("receipt"));
        assertThat(cache.get(key)).as("filled by the completion").isPresent();
        assertThat(env.store.delete(new Deletion.All(), clock.instant(), 10, cache::remove)).isEqualTo(1);
        assertThat(cache.get(key)).isEmpty();
        assertThat(engine.begin(key, "fp", null, POLICY)).isInstanceOf(Decision.Proceed.class);
    }

    /**
     * A finished record read from the store is not cached once a deletion that raced with the read has evicted
     * its key: the deletion here runs between the store's answer and the engine's cache put. Without the
     * tombstone the cache would hold a record the store no longer has, and replay it to the next request.
     */
    @Test
    void aRecordReadBeforeAConcurrentDeletionIsNotCachedAfterIt() {
        ScopedKey key = new ScopedKey("cache", "anonymous", "k7");
        engine.complete(claim(key, "fp"), bytes("receipt"));
        cache.clear(); // the next duplicate asks the store
        IdempotencyStore deletingAfterTheRead = (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(env.store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("claim")) {
                        env.store.delete(new Deletion.All(), clock.instant(), 10, cache::remove);
                    }
                    return result;
                });
        IdempotencyEngine racing = new IdempotencyEngine(deletingAfterTheRead, clock, "node-b", env.bridge(),
                new LocalCompletionSignals(), Executors.newSingleThreadExecutor(), Duration.ofSeconds(10), cache);
        assertThat(racing.begin(key, "fp", null, POLICY)).as("read before the deletion").isInstanceOf(Decision.Replay.class);
        assertThat(env.store.find(key)).isEmpty();
        assertThat(cache.get(key)).as("not cached after the deletion").isEmpty();
        assertThat(engine.begin(key, "fp", null, POLICY)).isInstanceOf(Decision.Proceed.class);
    }

    @Test
    void theCacheIsBounded() {
        for (int i = 0; i < 1500; i++) {
            ScopedKey key = new ScopedKey("bounded", "anonymous", "k" + i);
            engine.complete(claim(key, "fp"), bytes("r"));
        }
        assertThat(cache.size()).isLessThanOrEqualTo(1000);
    }
}
