package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.ForIdempotency;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;

import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.manager.EmbeddedCacheManager;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * The cache in front of the store: by default the library's own cache of the JVM (no cache manager); the application's
 * own cache manager (a CDI bean) wins over it; mode none has no cache.
 */
class CacheSelectionTest {

    @ApplicationScoped
    public static class Greeter {
        @Idempotent
        public String greet(@IdempotencyKey String key, String name) {
            return "hello " + name;
        }
    }

    @ApplicationScoped
    public static class ApplicationCacheManager {
        static EmbeddedCacheManager created;

        @Produces
        @ForIdempotency
        @ApplicationScoped
        EmbeddedCacheManager manager() {
            created = new DefaultCacheManager(new GlobalConfigurationBuilder().nonClusteredDefault()
                    .cacheManagerName("the-application's").jmx().disable().build());
            return created;
        }

        void close(@Disposes @ForIdempotency EmbeddedCacheManager manager) {
            manager.stop();
        }
    }

    @Test
    void theApplicationsCacheManagerWins() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory"), Greeter.class,
                ApplicationCacheManager.class).initialize()) {
            c.select(Greeter.class).get().greet("k", "ada");
            var cache = (dev.idempotency.cache.InfinispanRecordCache) c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.cache().getCacheManager().getCacheManagerConfiguration().cacheManagerName()).isEqualTo("the-application's");
            assertThat(ApplicationCacheManager.created.getCacheNames()).contains(CacheManagers.CACHE);
            assertThat(cache.size()).isEqualTo(1);
        }
    }

    @Test
    void theDefaultIsACacheOfThisJvmsOwnWithNoCacheManager() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory", "idempotency.cache.max-entries", "500"),
                Greeter.class).initialize()) {
            assertThat(c.select(Greeter.class).get().greet("k", "ada")).isEqualTo("hello ada");
            var cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache).isInstanceOf(dev.idempotency.cache.LocalRecordCache.class);
            assertThat(cache.description()).isEqualTo("a local cache (this JVM's, up to 500 entries)");
            assertThat(cache.size()).as("the finished call, cached").isEqualTo(1);
            assertThat(c.select(Greeter.class).get().greet("k", "ada")).isEqualTo("hello ada");
        }
    }

    @Test
    void modeNoneHasNoCache() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory", "idempotency.cache.mode", "none"),
                Greeter.class).initialize()) {
            assertThat(c.select(Greeter.class).get().greet("k", "ada")).isEqualTo("hello ada");
            assertThat(c.select(IdempotencyRuntime.class).get().recordCache()).isNull();
        }
    }
}
