package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.ClusterRecordCache;
import dev.idempotency.cache.ClusterTuning;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.contract.FirstAnswerContract.CacheKind;
import dev.idempotency.contract.FirstAnswerContract.Door;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the schedules run on: a real JTA stack over a database (Narayana, an Agroal pool enlisting in it, the library's JPA store)
 * and a replicated Infinispan cache that the nodes of a {@link CacheKind#SHARED} world share. Each world gets keys of
 * its own.
 */
final class Stack implements AutoCloseable {

    /** The shared cache's secret: the engines' and the CDI nodes' entries carry a MAC under it. */
    static final String SECRET = "the contract suite's cache secret, 32 characters or more";
    private static final CacheKeys KEYS = CacheKeys.of(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8));

    final TestDatabase database;
    final JtaEnvironment env;
    /** Reads the committed business rows, outside every transaction. */
    final Connection reader;
    final EmbeddedCacheManager manager;
    private final Cache<String, byte[]> shared;
    /** The shared cache as the nodes see it: it fails every call while {@link #cut} is on. */
    private final Cache<String, byte[]> cuttable;
    private final java.util.concurrent.atomic.AtomicBoolean cut = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * The library's clustered cache's tuning, but for its retry interval: a cache that failed is probed again at the next
     * call (a schedule's steps follow each other within milliseconds).
     */
    static final ClusterTuning TUNING = new ClusterTuning(ClusterTuning.DEFAULT.timeout(), java.time.Duration.ofMillis(1),
            ClusterTuning.DEFAULT.failureDetection());
    private final AtomicLong worlds = new AtomicLong();

    private Stack(TestDatabase database) throws SQLException {
        this.database = database;
        database.reset();
        env = new JtaEnvironment(database.url, database.user, database.password, Map.of(), 20, false, true);
        reader = database.connect();
        // A replicated cache (a cluster of one, on loopback): its nodes' engines each see every entry, marker and
        // change, as the nodes of a replicated cache do, with the entries' MAC keyed alike on every node.
        manager = CacheManagers.start(true, "contract", "contract-node", null, "127.0.0.1", 7890, "127.0.0.1[7890]", 10_000);
        shared = CacheManagers.defineCache(manager, 10_000);
        cuttable = new CuttableCache(shared.getAdvancedCache(), cut);
        ContractApplication.sharedCache = cuttable; // the CDI nodes' application cache
    }

    /** The stack on a database; skipped (or failed, where databases are required) when it cannot be reached. */
    static Stack open(TestDatabase database) {
        database.assumeAvailable();
        try {
            return new Stack(database);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** Two new nodes over the store, with keys no other world uses. */
    World world(ClaimMode mode, Door door, CacheKind cache) {
        return world(mode, door, cache, false);
    }

    /** {@code boundedStatements}: the world's store bounds each statement by {@link #STATEMENT_BOUND}. */
    World world(ClaimMode mode, Door door, CacheKind cache, boolean boundedStatements) {
        cut.set(false);
        shared.clear();
        try (java.sql.Statement st = reader.createStatement()) {
            st.executeUpdate("delete from idempotency_record"); // each world's operator deletes its own records only
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        // As the library guards a clustered cache: bounded, bypassed while it fails, its writes off the caller's thread.
        return new World(this, "w" + worlds.incrementAndGet(), mode, door, cache,
                (clock, signals) -> ClusterRecordCache.start(new InfinispanRecordCache(cuttable, clock, signals, KEYS), TUNING),
                boundedStatements ? boundedStore() : env.store);
    }

    /**
     * The short statement bound of the worlds that wait past it: a deployment's {@code idempotency.connection-timeout}
     * of 2 s with a lock timeout of 1 s (a statement's bound is then a second more than the lock waits it asks for).
     */
    static final java.time.Duration STATEMENT_BOUND = java.time.Duration.ofSeconds(2);
    private dev.idempotency.spi.IdempotencyStore bounded;

    /** The store behind the library's bounded data source, with a {@link #STATEMENT_BOUND} (made once). */
    synchronized dev.idempotency.spi.IdempotencyStore boundedStore() {
        if (bounded == null) {
            bounded = env.boundedStore(STATEMENT_BOUND, java.time.Duration.ofSeconds(1));
        }
        return bounded;
    }

    /** The shared cache fails every call (its members do not answer), or answers again. */
    void cut(boolean on) {
        cut.set(on);
    }

    @Override
    public void close() {
        try {
            reader.close();
        } catch (SQLException e) {
            // closing a connection that only read
        }
        manager.stop();
        env.close();
    }
}
