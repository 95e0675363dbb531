package dev.idempotency.cdi;

import dev.idempotency.cache.ManagedRecordCache;
import dev.idempotency.cdi.RemoteCacheDeploymentTest.Greeter;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.InfinispanServers;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.HashMap;
import java.util.Map;

import static dev.idempotency.cdi.DeploymentErrorsTest.deploymentFailure;
import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * {@code idempotency.cache.mode=remote} against a secured Infinispan Server (infinispan-secured.xml): Hot Rod over TLS
 * (the server's self-signed certificate, trusted through {@code idempotency.cache.remote.trust-store}) with SASL
 * SCRAM-SHA-512 users and the server's authorization. The keys under {@code idempotency.cache.remote.} reach the
 * client: a user of the {@code deployer} role works and the library creates its cache; one of the {@code application}
 * role uses a cache that exists ({@code create=false}); a wrong password, or a user who may not create caches, fails
 * the deployment, naming the cause.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecuredRemoteCacheTest {

    static final int NODE = 3;
    final InfinispanServers server = new InfinispanServers(NODE, 1, "infinispan-secured.xml");
    Path trustStore;

    @BeforeAll
    void start() throws Exception {
        InfinispanServers.assumeAvailable();
        server.start();
        // A trust store holding the certificate the server generated for itself at its first start.
        KeyStore serverKeys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(InfinispanServers.conf(NODE).resolve("server.p12"))) {
            serverKeys.load(in, "server-keystore-secret".toCharArray());
        }
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("infinispan", serverKeys.getCertificate("server"));
        trustStore = Path.of("target", "infinispan-server", "client-truststore.p12");
        try (OutputStream out = Files.newOutputStream(trustStore)) {
            trust.store(out, "trust-secret".toCharArray());
        }
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
    }

    Map<String, String> secured(String user, String password) {
        return secured(user, password, "secured-records");
    }

    Map<String, String> secured(String user, String password, String cache) {
        Map<String, String> p = new HashMap<>(Map.of("idempotency.store", "memory", "idempotency.cache.mode", "remote",
                "idempotency.cache.remote.servers", "localhost:" + InfinispanServers.hotRodPort(NODE),
                "idempotency.cache.remote.tls", "true",
                "idempotency.cache.remote.trust-store", trustStore.toString(),
                "idempotency.cache.remote.trust-store-password", "trust-secret",
                "idempotency.cache.remote.sni-host", "localhost",
                "idempotency.cache.remote.username", user,
                "idempotency.cache.remote.password", password));
        p.put("idempotency.cache.remote.cache", cache);
        return p;
    }

    @Test
    void anApplicationUserOverTlsCreatesTheCacheAndReplaysFromIt() {
        int runs = Greeter.RUNS.get();
        try (WeldContainer c = IdempotencyWeld.weld(secured("app", "app-password-0123456789"), Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            assertThat(g.greet("s1", "ada")).isEqualTo("hello ada");
            assertThat(g.greet("s1", "ada")).isEqualTo("hello ada");
            assertThat(Greeter.RUNS.get() - runs).isEqualTo(1);
            ManagedRecordCache cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.reachable()).isTrue();
            assertThat(cache.size()).as("the finished record, on the server").isEqualTo(1);
        }
    }

    @Test
    void anApplicationRoleUserUsesACacheThatExists() {
        try (WeldContainer c = IdempotencyWeld.weld(secured("app", "app-password-0123456789", "made-records"),
                Greeter.class).initialize()) {
            c.select(Greeter.class).get().greet("s2", "made by the deployer");
        }
        int runs = Greeter.RUNS.get();
        Map<String, String> worker = secured("worker", "worker-password-0123456789", "made-records");
        worker.put("idempotency.cache.remote.create", "false");
        try (WeldContainer c = IdempotencyWeld.weld(worker, Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            assertThat(g.greet("s3", "grace")).isEqualTo("hello grace");
            assertThat(g.greet("s3", "grace")).isEqualTo("hello grace");
            assertThat(Greeter.RUNS.get() - runs).isEqualTo(1);
            ManagedRecordCache cache = c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.reachable()).isTrue();
            assertThat(cache.size()).as("the deployer's record and the worker's, on the server").isEqualTo(2);
        }
    }

    @Test
    void aWrongPasswordFailsTheDeployment() {
        assertThat(deploymentFailure(secured("app", "not-the-password"), Greeter.class))
                .contains("The remote cache secured-records could not be reached or created")
                .contains("idempotency.cache.remote.password");
    }

    @Test
    void aUserWhoMayNotCreateCachesFailsTheDeploymentNamingThePermission() {
        assertThat(deploymentFailure(secured("reader", "reader-password-0123456789", "reader-records"), Greeter.class))
                .contains("could not be reached or created (the user needs the CREATE permission, the deployer role by default");
    }
}
