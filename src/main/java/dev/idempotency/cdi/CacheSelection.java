package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.core.LocalCompletionSignals;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.util.TypeLiteral;
import jakarta.inject.Inject;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;

import java.time.Clock;

/** Chooses and starts the cache in front of the store (SPEC S4): one job, and stops what it started. */
@ApplicationScoped
public class CacheSelection {

    @Inject
    @Any
    Instance<Object> beans;

    private EmbeddedCacheManager ownCacheManager;
    private InfinispanRecordCache recordCache;

    /** The application's cache or cache manager (qualified {@code @ForIdempotency}), else one of our own; {@code null}: none. */
    InfinispanRecordCache create(GlobalSettings s, Clock clock, LocalCompletionSignals signals) {
        Instance<Cache<String, byte[]>> own = beans.select(new TypeLiteral<Cache<String, byte[]>>() { }, ForIdempotency.Literal.INSTANCE);
        if (own.isResolvable()) {
            return recordCache = new InfinispanRecordCache(own.get(), clock, signals);
        }
        EmbeddedCacheManager manager = Lookups.qualified(beans, EmbeddedCacheManager.class);
        if (manager == null) {
            if (s.cacheMode().equals("none")) {
                return null;
            }
            manager = ownCacheManager = CacheManagers.start(s.cacheMode().equals("cluster"), s.clusterName(), s.nodeId(),
                    s.jgroupsStack().isEmpty() ? null : s.jgroupsStack(), s.bindAddress(), s.bindPort(), s.initialHosts(),
                    s.cacheMaxEntries());
        }
        return recordCache = new InfinispanRecordCache(CacheManagers.defineCache(manager, s.cacheMaxEntries()), clock, signals);
    }


    @PreDestroy
    synchronized void stop() {
        if (recordCache != null) {
            recordCache.close();
        }
        if (ownCacheManager != null) {
            ownCacheManager.stop();
        }
    }
}
