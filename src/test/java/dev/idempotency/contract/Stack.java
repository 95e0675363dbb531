package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.contract.FirstAnswerContractTest.CacheKind;
import dev.idempotency.contract.FirstAnswerContractTest.Door;
import dev.idempotency.testing.JtaEnvironment;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the schedules run on: a real JTA stack over H2 (Narayana, an Agroal pool enlisting in it, the library's JPA store)
 * and a replicated Infinispan cache that the nodes of a {@link CacheKind#SHARED} world share. Each world gets keys of
 * its own.
 */
final class Stack implements AutoCloseable {

    static final String URL = "jdbc:h2:mem:first-answer;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    private static final CacheKeys KEYS = CacheKeys.of("the contract suite's cache secret, 32 characters or more"
            .getBytes(java.nio.charset.StandardCharsets.UTF_8));

    final JtaEnvironment env;
    private final EmbeddedCacheManager manager;
    private final Cache<String, byte[]> shared;
    private final AtomicLong worlds = new AtomicLong();

    private Stack() throws SQLException {
        try (Connection c = DriverManager.getConnection(URL, "sa", ""); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS test_payment");
            s.execute("CREATE TABLE test_payment (id VARCHAR(200) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL)");
        }
        env = new JtaEnvironment(URL, "sa", "", Map.of(), 20, false, true);
        // A replicated cache (a cluster of one, on loopback): its nodes' engines each see every entry, marker and
        // change, as the nodes of a replicated cache do, with the entries' MAC keyed alike on every node.
        manager = CacheManagers.start(true, "contract", "contract-node", null, "127.0.0.1", 7890, "127.0.0.1[7890]", 10_000);
        shared = CacheManagers.defineCache(manager, 10_000);
    }

    static Stack open() {
        try {
            return new Stack();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** Two new nodes over the store, with keys no other world uses. */
    World world(ClaimMode mode, Door door, CacheKind cache) {
        shared.clear();
        return new World(env, "w" + worlds.incrementAndGet(), mode, door, cache,
                (clock, signals) -> new InfinispanRecordCache(shared, clock, signals, KEYS));
    }

    @Override
    public void close() {
        manager.stop();
        env.close();
    }
}
