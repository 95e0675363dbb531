package dev.idempotency.cache;

import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 22 item 2: every cache entry carries an HMAC-SHA-256 over its scope, key and content. An entry put straight
 * into the cache (as anyone who could write to it would) with a wrong MAC, with none, or a genuine entry moved under
 * another scope's id, is never replayed: the store answers, the operation runs once, and the entry is counted.
 */
class CacheEntryMacTest {

    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);
    static final byte[] SECRET = "the cluster's secret, 32 characters or more".getBytes(StandardCharsets.UTF_8);

    final FakeClock clock = new FakeClock();
    final AtomicInteger executions = new AtomicInteger();
    JtaEnvironment env;
    EmbeddedCacheManager manager;
    Cache<String, byte[]> raw;
    InfinispanRecordCache cache;
    IdempotencyEngine engine;

    @BeforeEach
    void start() {
        TestDatabase.H2.reset();
        env = new JtaEnvironment(TestDatabase.H2, Map.of("hibernate.generate_statistics", "true"));
        manager = CacheManagers.start(false, "test", "node-a", null, "127.0.0.1", 7800, "127.0.0.1[7800]", 1000);
        LocalCompletionSignals signals = new LocalCompletionSignals();
        raw = CacheManagers.defineCache(manager, 1000);
        cache = new InfinispanRecordCache(raw, clock, signals, CacheKeys.of(SECRET));
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

    /** A caller's request: replayed, or run (counted) and completed with {@code response}. */
    byte[] call(ScopedKey key, String response) {
        Decision d = engine.begin(key, "fp", null, POLICY);
        if (d instanceof Decision.Replay replay) {
            return replay.record().response();
        }
        executions.incrementAndGet();
        engine.complete(((Decision.Proceed) d).ticket(), bytes(response));
        return bytes(response);
    }

    /** A finished record as the attacker would like it replayed. */
    IdempotencyRecord forged(ScopedKey key, String response) {
        return IdempotencyRecord.of(key).status(RecordStatus.COMPLETED).fingerprint("fp").response(bytes(response))
                .attempts(1).firstSeen(clock.instant()).lastSeen(clock.instant()).completedAt(clock.instant())
                .expiresAt(clock.instant().plus(Duration.ofHours(1))).version(1).build();
    }

    @Test
    void anEntryUnderAnotherSecretIsNeverReplayed() {
        ScopedKey key = new ScopedKey("payments", "alice", "never-ran");
        raw.put(key.cacheId(), RecordBytes.encode(forged(key, "forged receipt"), CacheKeys.of(bytes("another secret of 32 characters or more")).entryMac()));
        assertThat(call(key, "real receipt")).as("the store answered: new, so it ran").isEqualTo(bytes("real receipt"));
        assertThat(call(key, "a second run")).isEqualTo(bytes("real receipt"));
        assertThat(executions).hasValue(1);
        assertThat(cache.rejectedEntries()).isEqualTo(1);
    }

    @Test
    void aTamperedOrMacLessEntryOfAFinishedKeyIsAnsweredByTheStore() {
        ScopedKey key = new ScopedKey("payments", "alice", "ran-once");
        assertThat(call(key, "real receipt")).isEqualTo(bytes("real receipt"));
        byte[] genuine = raw.get(key.cacheId());

        // The genuine entry with one byte of its response changed: the MAC no longer verifies.
        byte[] tampered = genuine.clone();
        tampered[tampered.length - RecordBytes.MAC_LENGTH - 1] ^= 1;
        raw.put(key.cacheId(), tampered);
        assertThat(call(key, "a second run")).isEqualTo(bytes("real receipt"));
        assertThat(cache.rejectedEntries()).isEqualTo(1);

        // A forged entry with its MAC cut off (or zeroed): the same.
        byte[] forged = RecordBytes.encode(forged(key, "forged receipt"), CacheKeys.random().entryMac());
        raw.put(key.cacheId(), Arrays.copyOf(forged, forged.length - RecordBytes.MAC_LENGTH));
        assertThat(call(key, "a third run")).isEqualTo(bytes("real receipt"));
        Arrays.fill(forged, forged.length - RecordBytes.MAC_LENGTH, forged.length, (byte) 0);
        raw.put(key.cacheId(), forged);
        assertThat(call(key, "a fourth run")).isEqualTo(bytes("real receipt"));

        assertThat(executions).as("the operation ran once").hasValue(1);
        assertThat(cache.rejectedEntries()).isEqualTo(3);
    }

    @Test
    void aGenuineEntryMovedToAnotherScopeIsNeverReplayed() {
        ScopedKey alices = new ScopedKey("payments", "alice", "k-1");
        ScopedKey bobs = new ScopedKey("payments", "bob", "k-1");
        assertThat(call(alices, "alice's receipt")).isEqualTo(bytes("alice's receipt"));
        raw.put(bobs.cacheId(), raw.get(alices.cacheId()));
        assertThat(call(bobs, "bob's receipt")).as("bob's own call ran").isEqualTo(bytes("bob's receipt"));
        assertThat(executions).hasValue(2);
        assertThat(cache.rejectedEntries()).isEqualTo(1);
        assertThat(call(alices, "again")).isEqualTo(bytes("alice's receipt"));
        assertThat(call(bobs, "again")).isEqualTo(bytes("bob's receipt"));
        assertThat(executions).hasValue(2);
    }

    /**
     * A replay decodes a hot key's entry once and answers from it while the cache holds that very entry; an entry
     * written over it (here, tampered with, as anyone who could write to the cache would) is checked afresh and refused.
     */
    @Test
    void anEntryIsDecodedOnceAndAnEntryWrittenOverItIsCheckedAgain() {
        ScopedKey key = new ScopedKey("payments", "alice", "hot");
        assertThat(call(key, "real receipt")).isEqualTo(bytes("real receipt"));
        IdempotencyRecord first = cache.get(key).orElseThrow();
        assertThat(cache.get(key).orElseThrow()).as("decoded once").isSameAs(first);

        byte[] tampered = raw.get(key.cacheId()).clone();
        tampered[tampered.length - RecordBytes.MAC_LENGTH - 1] ^= 1;
        raw.put(key.cacheId(), tampered);
        assertThat(cache.get(key)).as("the new entry was checked, not the old one's record answered").isEmpty();
        assertThat(cache.rejectedEntries()).isEqualTo(1);
        assertThat(call(key, "a second run")).isEqualTo(bytes("real receipt"));

        // A new genuine entry (the record cached again) is another array: decoded again, then kept.
        cache.put(first);
        IdempotencyRecord again = cache.get(key).orElseThrow();
        assertThat(again).isNotSameAs(first);
        assertThat(again.response()).isEqualTo(first.response());
        assertThat(cache.get(key).orElseThrow()).isSameAs(again);
        assertThat(executions).hasValue(1);
    }

    @Test
    void aGenuineEntryIsReplayedWithNoSql() {
        ScopedKey key = new ScopedKey("payments", "alice", "genuine");
        call(key, "receipt");
        long before = env.statements();
        assertThat(call(key, "again")).isEqualTo(bytes("receipt"));
        assertThat(env.statements()).isEqualTo(before);
        assertThat(cache.rejectedEntries()).isZero();
    }

    @Test
    void nodesWithTheSameSecretReadEachOthersEntriesAndOthersDoNot() {
        ScopedKey key = new ScopedKey("payments", "alice", "shared");
        byte[] entry = RecordBytes.encode(forged(key, "receipt"), CacheKeys.of(SECRET).entryMac());
        assertThat(RecordBytes.check(entry, CacheKeys.of(SECRET.clone()).entryMac())).isEqualTo(RecordBytes.Check.VERIFIED);
        assertThat(RecordBytes.check(entry, CacheKeys.random().entryMac())).isEqualTo(RecordBytes.Check.FORGED);
        assertThat(RecordBytes.check(entry, CacheKeys.unprotected("idempotency").entryMac())).isEqualTo(RecordBytes.Check.FORGED);
        assertThat(RecordBytes.decode(entry).response()).isEqualTo(bytes("receipt"));
    }
}
