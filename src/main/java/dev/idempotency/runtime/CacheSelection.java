package dev.idempotency.runtime;

import dev.idempotency.ForIdempotency;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.ClusterRecordCache;
import dev.idempotency.cache.ClusterTuning;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.cache.LocalRecordCache;
import dev.idempotency.cache.HotRodClient;
import dev.idempotency.cache.ManagedRecordCache;
import dev.idempotency.cache.RemoteCaches;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigKey;
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
import java.util.logging.Level;
import java.util.logging.Logger;

/** Chooses and starts the cache in front of the store: one job, and stops what it started. */
@ApplicationScoped
public class CacheSelection {

    private static final Logger LOG = Logger.getLogger(CacheSelection.class.getName());

    @Inject
    @Any
    Instance<Object> beans;

    private EmbeddedCacheManager ownCacheManager;
    private ManagedRecordCache recordCache;

    /**
     * The application's cache, cache manager or Hot Rod {@code RemoteCacheManager} (qualified {@code @ForIdempotency}),
     * else one of our own (a {@link LocalRecordCache} for {@code local}, an Infinispan cluster's for {@code cluster});
     * {@code null}: none.
     */
    ManagedRecordCache create(GlobalSettings s, Clock clock, LocalCompletionSignals signals) {
        Instance<Cache<String, byte[]>> own = beans.select(new TypeLiteral<Cache<String, byte[]>>() { }, ForIdempotency.Literal.INSTANCE);
        if (own.isResolvable()) {
            Cache<String, byte[]> cache = own.get();
            return recordCache = guarded(new InfinispanRecordCache(cache, clock, signals,
                    keys(s, cache.getCacheConfiguration().clustering().cacheMode().isClustered())), s);
        }
        EmbeddedCacheManager manager = Lookups.qualified(beans, EmbeddedCacheManager.class);
        Object remote = manager != null ? null : applicationRemoteCacheManager();
        if (remote != null || manager == null && s.cacheMode().equals("remote")) {
            if (HotRodClient.managerClass() == null) {
                throw new IdempotencyConfigurationException(ConfigKey.CACHE_MODE.key() + "=remote needs the Hot Rod client: add "
                        + "org.infinispan:infinispan-client-hotrod (the version of the library's Infinispan, "
                        + org.infinispan.commons.util.Version.getVersion() + ") to the application");
            }
            return recordCache = RemoteCaches.start(s.remoteCache(), remote, s.cacheOwners(), s.cacheMaxEntries(),
                    keys(s, true), s.allowInsecureTransport(), clock, signals);
        }
        if (manager == null) {
            if (s.cacheMode().equals("none")) {
                return null;
            }
            if (s.cacheMode().equals("local")) {
                // This JVM's alone: a bounded map of its records, no cache manager.
                return recordCache = new LocalRecordCache(s.cacheMaxEntries(), s.cacheLocalMaxAge(), clock, signals);
            }
            CacheKeys keys = keys(s, true);
            manager = ownCacheManager = CacheManagers.start(true, s.clusterName(), s.nodeId(),
                    s.jgroupsStack().isEmpty() ? null : s.jgroupsStack(), s.bindAddress(), s.bindPort(), s.initialHosts(),
                    s.cacheMaxEntries(), keys, s.allowInsecureTransport(), owners(s), tuning(s));
            if (keys.fromSecret()) {
                LOG.log(Level.INFO, s.jgroupsStack().isEmpty()
                        ? "The clustered cache''s JGroups stack is encrypted and authenticated (SYM_ENCRYPT, SERIALIZE, AUTH) with {0}; its entries carry a MAC"
                        : "The clustered cache runs the JGroups stack {1} as it is; its entries carry a MAC keyed by {0}",
                        new Object[] {s.cacheSecret().source(), s.jgroupsStack()});
            }
            return recordCache = guarded(new InfinispanRecordCache(
                    CacheManagers.defineCache(manager, s.cacheMaxEntries(), owners(s), tuning(s)), clock, signals, keys), s);
        }
        Cache<String, byte[]> cache = CacheManagers.defineCache(manager, s.cacheMaxEntries(), owners(s), tuning(s));
        return recordCache = guarded(new InfinispanRecordCache(cache, clock, signals,
                keys(s, cache.getCacheConfiguration().clustering().cacheMode().isClustered())), s);
    }

    private static ClusterTuning tuning(GlobalSettings s) {
        return new ClusterTuning(s.cacheClusterTimeout(), s.cacheClusterRetryInterval(), s.cacheFailureDetection());
    }

    /**
     * A clustered cache, bounded and bypassed while its members do not answer ({@link ClusterRecordCache}); a local one
     * as it is (an application's clustered cache keeps its own timeouts: its configuration is the application's).
     */
    private static ManagedRecordCache guarded(InfinispanRecordCache cache, GlobalSettings s) {
        return cache.shared() ? ClusterRecordCache.start(cache, tuning(s)) : cache;
    }

    /** A clustered cache's owners: 0 (replicated) unless {@code idempotency.cache.clustering=distributed}. */
    private static int owners(GlobalSettings s) {
        return s.cacheClustering().equals("distributed") ? s.cacheOwners() : 0;
    }

    /** The application's Hot Rod {@code RemoteCacheManager} (qualified {@code @ForIdempotency}), when the client is here. */
    private Object applicationRemoteCacheManager() {
        Class<?> type = HotRodClient.managerClass();
        return type == null ? null : Lookups.qualified(beans, type);
    }

    /**
     * The keys of the entries' MAC (and of the built-in cluster's transport): from the configured secret; without one,
     * random for a cache of this JVM alone, or derived from the cluster's name for a shared one (which a deployment
     * off loopback refuses unless allowed; then entries are protected against mistakes only, and a warning says so).
     */
    private static CacheKeys keys(GlobalSettings s, boolean shared) {
        if (s.cacheSecret() != null) {
            return CacheKeys.of(s.cacheSecret().material());
        }
        if (!shared) {
            return CacheKeys.random();
        }
        LOG.log(Level.WARNING, "The shared cache has no idempotency.cache.secret: its entries carry a MAC under a key "
                + "anyone can derive" + (s.cacheMode().equals("remote") ? "" : ", and the built-in JGroups stack is not encrypted")
                + ". Safe on loopback only; set idempotency.cache.secret (or idempotency.cache.keystore) on every node");
        return CacheKeys.unprotected(s.cacheMode().equals("remote") ? s.remoteCache().cache() : s.clusterName());
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
