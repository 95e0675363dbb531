package dev.idempotency.cache;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.infinispan.manager.EmbeddedCacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * SPEC S4 on one node: the JPA store on H2 with an Infinispan cache in front. Statements are counted with
 * Hibernate's statistics: a duplicate of a finished key runs none.
 */
class CacheFrontTest {

    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);

    final FakeClock clock = new FakeClock();
    JtaEnvironment env;
    EmbeddedCacheManager manager;
    InfinispanRecordCache cache;
    IdempotencyEngine engine;

    @BeforeEach
    void start() {
        TestDatabase.H2.reset();
        env = new JtaEnvironment(TestDatabase.H2, Map.of("hibernate.generate_statistics", "true"));
        manager = CacheManagers.start(false, "test", "node-a", null, "127.0.0.1", 7800, "127.0.0.1[7800]", 1000);
        LocalCompletionSignals signals = new LocalCompletionSignals();
        cache = new InfinispanRecordCache(CacheManagers.defineCache(manager, 1000), clock, signals);
        engine = new IdempotencyEngine(env.store, clock, "node-a", env.bridge(), signals, Executors.newSingleThreadExecutor(),
                Duration.ofSeconds(10), cache);
    }

    @AfterEach
    void stop() {
        cache.close();
        manager.stop();
        env.close();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    Ticket claim(ScopedKey key, String fp) {
        return ((Decision.Proceed) engine.begin(key, fp, null, POLICY)).ticket();
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
        cache.cache().clear();
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
        env.tm.rollback();
        assertThat(cache.get(key)).isEmpty();
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
