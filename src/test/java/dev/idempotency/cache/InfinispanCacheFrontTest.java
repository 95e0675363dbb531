package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.testing.FakeClock;

import org.infinispan.manager.EmbeddedCacheManager;

/** The cache front with a local Infinispan cache (an application's own, given to the library with {@code @ForIdempotency}). */
class InfinispanCacheFrontTest extends CacheFrontContract {

    @Override
    ManagedRecordCache newCache(String node, int port, FakeClock clock, LocalCompletionSignals signals) {
        EmbeddedCacheManager manager = CacheManagers.start(false, "test", node, null, "127.0.0.1", port, "127.0.0.1[" + port + "]", 1000);
        started.add(manager::stop);
        InfinispanRecordCache cache = new InfinispanRecordCache(CacheManagers.defineCache(manager, 1000), clock, signals);
        started.add(cache);
        return cache;
    }
}
