package dev.idempotency.cache;

import dev.idempotency.config.RemoteCacheSettings;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.InfinispanServers;
import dev.idempotency.testing.TcpProxy;

import org.infinispan.client.hotrod.RemoteCache;
import org.infinispan.client.hotrod.RemoteCacheManager;
import org.infinispan.client.hotrod.configuration.ConfigurationBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The remote cache while the network to its server is cut ({@link TcpProxy} between client and server, cut and
 * restored; the server keeps its entries): reads miss (the store would answer), and a key released or deleted meanwhile
 * is evicted before the cache answers again, so a stale finished record is never replayed; past
 * {@value RemoteRecordCache#MAX_PENDING} such keys the cache is emptied instead.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteCacheOutageTest {

    static final int NODE = 4;
    final InfinispanServers server = new InfinispanServers(NODE, 1);
    TcpProxy proxy;
    RemoteCacheManager direct;
    RemoteCache<String, byte[]> onTheServer;

    @BeforeAll
    void start() throws Exception {
        InfinispanServers.assumeAvailable();
        server.start();
        proxy = new TcpProxy("127.0.0.1", InfinispanServers.hotRodPort(NODE));
        direct = new RemoteCacheManager(new ConfigurationBuilder().addServers(server.serverList()).build());
    }

    @AfterAll
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (direct != null) {
            direct.stop();
        }
        server.close();
    }

    /** The library's remote cache through the proxy (BASIC intelligence: the client never learns the server's own address). */
    ManagedRecordCache cache(Path dir, String name) throws IOException {
        Path properties = dir.resolve("hotrod-client.properties");
        Files.writeString(properties, "infinispan.client.hotrod.client_intelligence=BASIC\n");
        RemoteCacheSettings s = new RemoteCacheSettings(List.of("127.0.0.1:" + proxy.port()), name, true, "", "", "default",
                "SCRAM-SHA-512", false, "", "", "", properties.toString(), 0, Duration.ofMillis(500), Duration.ofMillis(100), Duration.ofSeconds(5));
        ManagedRecordCache cache = RemoteCaches.start(s, null, 1, 10_000, CacheKeys.unprotected(name), false,
                Clock.systemUTC(), new LocalCompletionSignals());
        onTheServer = direct.getCache(name);
        return cache;
    }

    static IdempotencyRecord finished(ScopedKey key) {
        java.time.Instant now = java.time.Instant.now();
        return IdempotencyRecord.of(key).status(RecordStatus.COMPLETED).fingerprint("fp")
                .response(("answer of " + key.key()).getBytes(StandardCharsets.UTF_8)).attempts(1).firstSeen(now).lastSeen(now)
                .completedAt(now).expiresAt(now.plus(Duration.ofHours(1))).version(1).build();
    }

    /** Until the cache answers again (each read after the retry interval tries it), up to 30 s. */
    static void awaitReachable(ManagedRecordCache cache, ScopedKey probe) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!cache.reachable()) {
            assertThat(System.nanoTime()).as("the cache answers again").isLessThan(deadline);
            cache.get(probe);
            Thread.sleep(20);
        }
    }

    @Test
    void aKeyReleasedWhileTheServerIsCutOffIsEvictedBeforeTheCacheAnswersAgain(@TempDir Path dir) throws Exception {
        ManagedRecordCache cache = cache(dir, "outage-evictions");
        try {
            ScopedKey released = new ScopedKey("payments", "alice", "released-meanwhile");
            ScopedKey kept = new ScopedKey("payments", "alice", "kept");
            cache.put(finished(released));
            cache.put(finished(kept));
            assertThat(cache.get(released)).isPresent();

            proxy.cut();
            cache.evict(released); // cannot reach the server: remembered
            assertThat(cache.reachable()).isFalse();
            assertThat(cache.get(kept)).as("bypassed: a miss, the store answers").isEmpty();
            assertThat(onTheServer.get(released.cacheId())).as("the stale entry is still on the server").isNotNull();
            assertThat(RecordBytes.versionOf(onTheServer.get(released.cacheId()))).isTrue();

            proxy.restore();
            awaitReachable(cache, kept);
            assertThat(cache.get(kept)).as("in use again").isPresent();
            assertThat(cache.get(released)).as("never replayed after its release").isEmpty();
            assertThat(RecordBytes.versionOf(onTheServer.get(released.cacheId()))).as("a tombstone on the server").isFalse();
        } finally {
            cache.close();
        }
    }

    /**
     * A server that accepts connections and never answers (a black hole): a request waits at most
     * {@code idempotency.cache.remote.timeout} (here 500 ms), then the store answers, and the next ones do not wait at
     * all. After the servers answer again, a new client reaches them. (Here the client's socket timeout would also end
     * the wait: the operation was sent. The library's own bound is for operations the client never sends, which its
     * blocking calls wait a day for: a connection accepted and closed at once can leave one wedged, as a CI run saw.)
     */
    @Test
    void aServerThatNeverAnswersCostsARequestItsTimeoutAndThenNothing(@TempDir Path dir) throws Exception {
        ManagedRecordCache cache = cache(dir, "outage-silent");
        try {
            ScopedKey released = new ScopedKey("payments", "carol", "released-meanwhile");
            ScopedKey kept = new ScopedKey("payments", "carol", "kept");
            cache.put(finished(released));
            cache.put(finished(kept));
            assertThat(cache.get(kept)).isPresent();

            proxy.stall();
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                assertThat(cache.get(kept)).as("no answer: a miss, the store answers").isEmpty();
                assertThat(cache.reachable()).isFalse();
                cache.evict(released); // bypassed: remembered
                for (int i = 0; i < 50; i++) {
                    assertThat(cache.get(kept)).isEmpty(); // bypassed: no wait at all
                }
            });

            proxy.restore();
            awaitReachable(cache, kept);
            assertThat(((RemoteRecordCache) cache).reconnections()).as("reached again by a new client").isPositive();
            assertThat(cache.get(kept)).as("in use again").isPresent();
            assertThat(cache.get(released)).as("never replayed after its release").isEmpty();
        } finally {
            cache.close();
        }
    }

    @Test
    void pastTheRememberedLimitTheCacheIsEmptiedBeforeItAnswersAgain(@TempDir Path dir) throws Exception {
        ManagedRecordCache cache = cache(dir, "outage-overflow");
        try {
            ScopedKey kept = new ScopedKey("payments", "bob", "kept");
            cache.put(finished(kept));
            assertThat(cache.get(kept)).isPresent();

            proxy.cut();
            for (int i = 0; i <= RemoteRecordCache.MAX_PENDING; i++) {
                cache.evict(new ScopedKey("payments", "bob", "released-" + i));
            }
            assertThat(onTheServer.size()).isEqualTo(1);

            proxy.restore();
            awaitReachable(cache, new ScopedKey("payments", "bob", "probe"));
            // emptied of its records (what stays is the clear's mark, and tombstones: they hold no answer)
            assertThat(cache.holds(kept)).as("emptied").isFalse();
            assertThat(cache.get(kept)).isEmpty();
        } finally {
            cache.close();
        }
    }
}
