package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.cache.ManagedRecordCache;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.InfinispanServers;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.infinispan.client.hotrod.RemoteCacheManager;
import org.infinispan.client.hotrod.configuration.ConfigurationBuilder;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.idempotency.cdi.DeploymentErrorsTest.deploymentFailure;
import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * {@code idempotency.cache.mode=remote} through MicroProfile Config and CDI, against a real Infinispan Server (one node,
 * a JVM of its own): the library's cache on the server, the application's {@code RemoteCacheManager} winning, and the
 * deployment errors (a missing operator's cache, servers off loopback without TLS or a secret); an unreachable server
 * at deployment degrades to the store.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteCacheDeploymentTest {

    static final int NODE = 2;
    final InfinispanServers server = new InfinispanServers(NODE, 1);
    static String servers;

    @BeforeAll
    void start() throws Exception {
        InfinispanServers.assumeAvailable();
        server.start();
        servers = server.serverList();
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
    }

    @ApplicationScoped
    public static class Greeter {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Idempotent
        public String greet(@IdempotencyKey String key, String name) {
            RUNS.incrementAndGet();
            return "hello " + name;
        }
    }

    @ApplicationScoped
    public static class ApplicationRemoteCacheManager {
        static RemoteCacheManager created;

        @Produces
        @ForIdempotency
        @ApplicationScoped
        RemoteCacheManager manager() {
            created = new RemoteCacheManager(new ConfigurationBuilder().addServers(servers).build());
            return created;
        }
    }

    static Map<String, String> remote(String... more) {
        Map<String, String> p = new HashMap<>(Map.of("idempotency.store", "memory", "idempotency.cache.mode", "remote",
                "idempotency.cache.remote.servers", servers));
        for (int i = 0; i < more.length; i += 2) {
            p.put(more[i], more[i + 1]);
        }
        return p;
    }

    static RemoteCacheManager client() {
        return new RemoteCacheManager(new ConfigurationBuilder().addServers(servers).build());
    }

    @Test
    void theLibraryCreatesItsCacheOnTheServersAndReplaysFromIt() {
        int runs = Greeter.RUNS.get();
        try (WeldContainer c = IdempotencyWeld.weld(remote("idempotency.cache.remote.cache", "deployment-test",
                "idempotency.cache.remote.near-cache", "1000"), Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            assertThat(g.greet("k1", "ada")).isEqualTo("hello ada");
            assertThat(g.greet("k1", "ada")).isEqualTo("hello ada");
            assertThat(g.greet("k1", "ada")).isEqualTo("hello ada");
            assertThat(Greeter.RUNS.get() - runs).isEqualTo(1);
            ManagedRecordCache cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.description()).contains("Infinispan Server", "deployment-test", "near cache of 1000");
            assertThat(cache.shared()).isTrue();
            assertThat(cache.reachable()).isTrue();
        }
        RemoteCacheManager client = client();
        try {
            assertThat(client.getCache("deployment-test")).as("the cache the library created").isNotNull();
            assertThat(client.getCache("deployment-test").size()).as("the finished record").isEqualTo(1);
        } finally {
            client.stop();
        }
    }

    @Test
    void theApplicationsRemoteCacheManagerWinsAndIsNotStoppedByTheLibrary() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory"), Greeter.class,
                ApplicationRemoteCacheManager.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            g.greet("k2", "grace");
            ManagedRecordCache cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.description()).contains("Infinispan Server", "idempotency-records");
            assertThat(cache.size()).isEqualTo(1);
        }
        assertThat(ApplicationRemoteCacheManager.created.isStarted()).as("the application stops its own manager").isTrue();
        ApplicationRemoteCacheManager.created.stop();
    }

    @Test
    void aHotRodPropertiesFileNamesTheServers(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("hotrod-client.properties");
        java.nio.file.Files.writeString(file, "infinispan.client.hotrod.server_list=" + servers + "\n");
        Map<String, String> p = new HashMap<>(Map.of("idempotency.store", "memory", "idempotency.cache.mode", "remote",
                "idempotency.cache.remote.properties", file.toString(), "idempotency.cache.remote.cache", "from-properties"));
        int runs = Greeter.RUNS.get();
        try (WeldContainer c = IdempotencyWeld.weld(p, Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            g.greet("k4", "edsger");
            g.greet("k4", "edsger");
            assertThat(Greeter.RUNS.get() - runs).isEqualTo(1);
            ManagedRecordCache cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.description()).contains(servers.replace(";", ", "));
            assertThat(cache.size()).isEqualTo(1);
        }
    }

    @Test
    void anOperatorsCacheThatIsMissingFailsTheDeployment() {
        assertThat(deploymentFailure(remote("idempotency.cache.remote.cache", "no-such-cache",
                "idempotency.cache.remote.create", "false"), Greeter.class))
                .contains("The servers have no cache named no-such-cache");
    }

    @Test
    void serversOffLoopbackNeedTlsAndASecret() {
        assertThat(deploymentFailure(remote("idempotency.cache.remote.servers", "192.0.2.1:11222"), Greeter.class))
                .contains("The remote cache's servers [192.0.2.1] are off loopback")
                .contains("idempotency.cache.remote.tls=true")
                .contains("idempotency.cache.secret")
                .contains("idempotency.cache.allow-insecure-transport=true");
    }

    @Test
    void badRemoteValuesNameTheirKey() {
        assertThat(deploymentFailure(remote("idempotency.cache.remote.servers", "a:b:c"), Greeter.class))
                .contains("idempotency.cache.remote.servers=a:b:c must be host:port");
        assertThat(deploymentFailure(remote("idempotency.cache.remote.timeout", "2s"), Greeter.class))
                .contains("idempotency.cache.remote.timeout=2s is not an ISO-8601 duration");
        assertThat(deploymentFailure(remote("idempotency.cache.remote.username", "app"), Greeter.class))
                .contains("idempotency.cache.remote.username is set without idempotency.cache.remote.password");
        assertThat(deploymentFailure(remote("idempotency.cache.remote.properties", "no-such.properties"), Greeter.class))
                .contains("idempotency.cache.remote.properties=no-such.properties is neither a file nor a class path resource");
        assertThat(deploymentFailure(remote("idempotency.cache.clustering", "sharded"), Greeter.class))
                .contains("idempotency.cache.clustering=sharded must be one of replicated, distributed");
    }

    @Test
    void aServerUnreachableAtDeploymentLeavesTheStoreToAnswer() {
        int runs = Greeter.RUNS.get();
        try (WeldContainer c = IdempotencyWeld.weld(remote("idempotency.cache.remote.servers", "127.0.0.1:11999"),
                Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            assertThat(g.greet("k3", "alan")).isEqualTo("hello alan");
            assertThat(g.greet("k3", "alan")).isEqualTo("hello alan");
            assertThat(Greeter.RUNS.get() - runs).isEqualTo(1);
            assertThat(c.select(IdempotencyRuntime.class).get().recordCache().reachable()).isFalse();
        }
    }
}
