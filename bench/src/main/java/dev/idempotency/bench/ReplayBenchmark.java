package dev.idempotency.bench;

import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.cache.LocalRecordCache;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.core.TransactionBridge;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

import org.apache.camel.component.infinispan.embedded.InfinispanEmbeddedIdempotentRepository;
import org.infinispan.Cache;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.manager.EmbeddedCacheManager;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Replay of a finished key through the engine with the cache in front (1 KiB request body fingerprinted,
 * 1 KiB stored response): with the library's own local cache (its default), and with a local Infinispan cache (an
 * application's own; the default until 2026-11-26). Beside its floors: SHA-256 of 1 KiB plus a get of a bounded, expiring
 * Caffeine cache (what the local cache is), or of an Infinispan local cache; and beside the peer,
 * Camel's {@code camel-infinispan-embedded} repository answering a duplicate ({@code add} of a known key: a
 * {@code putIfAbsent} on a local cache of the same manager; it checks no fingerprint and returns no response).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReplayBenchmark {

    static final Policy POLICY = new Policy(Duration.ofHours(24), Duration.ofMinutes(1), false, Duration.ZERO);

    byte[] body = new byte[1024];
    byte[] response = new byte[1024];
    EmbeddedCacheManager manager;
    Cache<String, byte[]> raw;
    IdempotencyEngine engine;
    IdempotencyEngine infinispanEngine;
    com.github.benmanes.caffeine.cache.Cache<String, byte[]> caffeine;
    InfinispanEmbeddedIdempotentRepository camel;
    ScopedKey key = new ScopedKey("com.acme.Payments#create(PaymentRequest)", "alice", "order-1001");
    String rawKey = key.cacheId();
    MessageDigest sha;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        sha = MessageDigest.getInstance("SHA-256");
        new Random(1).nextBytes(body);
        new Random(2).nextBytes(response);
        manager = CacheManagers.start(false, "bench", "bench", null, "127.0.0.1", 7800, "127.0.0.1[7800]", 100_000);
        raw = manager.getCache(CacheManagers.CACHE);
        raw.put(rawKey + "-floor", response);
        caffeine = com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(100_000)
                .expireAfterWrite(Duration.ofHours(24)).executor(Runnable::run).build();
        caffeine.put(rawKey + "-floor", response);
        LocalCompletionSignals signals = new LocalCompletionSignals();
        engine = new IdempotencyEngine(new InMemoryIdempotencyStore(), Clock.systemUTC(), "bench", TransactionBridge.NONE,
                signals, Runnable::run, Duration.ofSeconds(5), new LocalRecordCache(100_000, Clock.systemUTC(), signals));
        LocalCompletionSignals infinispanSignals = new LocalCompletionSignals();
        infinispanEngine = new IdempotencyEngine(new InMemoryIdempotencyStore(), Clock.systemUTC(), "bench", TransactionBridge.NONE,
                infinispanSignals, Runnable::run, Duration.ofSeconds(5), new InfinispanRecordCache(raw, Clock.systemUTC(), infinispanSignals));
        manager.defineConfiguration("camel", new ConfigurationBuilder().build());
        camel = new InfinispanEmbeddedIdempotentRepository("camel");
        camel.setCacheContainer(manager);
        camel.start();
        if (!camel.add(rawKey)) {
            throw new IllegalStateException("Camel's repository is not empty");
        }
        String fp = fingerprint();
        givenFingerprint = fp;
        Ticket t = ((Decision.Proceed) engine.begin(key, fp, null, POLICY)).ticket();
        engine.complete(t, response);
        Ticket i = ((Decision.Proceed) infinispanEngine.begin(key, fp, null, POLICY)).ticket();
        infinispanEngine.complete(i, response);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        camel.stop();
        manager.stop();
    }

    String fingerprint() {
        return Fingerprint.start().add("POST").add("/api/payments").add((String) null).add("application/json").add(body).hex();
    }

    /** The floor: what a replay cannot avoid (a digest kept from one call to the next, a key built per call). */
    @Benchmark
    public Object floorSha256AndLocalGet() {
        sha.reset();
        byte[] digest = sha.digest(body);
        return caffeine.getIfPresent(rawKey + "-floor").length + digest[0];
    }

    /** The floor of {@link #replayThroughAnInfinispanLocalCache}: the same, with an Infinispan local get. */
    @Benchmark
    public Object floorSha256AndInfinispanLocalGet() {
        sha.reset();
        byte[] digest = sha.digest(body);
        return raw.get(rawKey + "-floor").length + digest[0];
    }

    /** A duplicate of a finished key: fingerprint, cache hit, fingerprint check; no store call. */
    @Benchmark
    public Object replayThroughTheEngine() {
        return engine.begin(key, fingerprint(), null, POLICY);
    }

    /** The same, with a local Infinispan cache in front instead of the library's own. */
    @Benchmark
    public Object replayThroughAnInfinispanLocalCache() {
        return infinispanEngine.begin(key, fingerprint(), null, POLICY);
    }

    String givenFingerprint;

    /** The engine's own part of a replay: a duplicate whose fingerprint is already computed (beside Camel's add alone). */
    @Benchmark
    public Object replayTheFingerprintGiven() {
        return engine.begin(key, givenFingerprint, null, POLICY);
    }

    /** The peer: Camel's embedded Infinispan repository told of a duplicate (no fingerprint, no response). */
    @Benchmark
    public boolean camelInfinispanDuplicate() {
        if (camel.add(rawKey)) {
            throw new IllegalStateException("a known key was new to Camel");
        }
        return false;
    }

    /** The peer doing the same work as the library: the duplicate's 1 KiB fingerprinted, then Camel's check. */
    @Benchmark
    public boolean camelInfinispanDuplicateWithFingerprint() {
        String fp = fingerprint();
        if (camel.add(rawKey)) {
            throw new IllegalStateException("a known key was new to Camel");
        }
        return fp.isEmpty();
    }
}
