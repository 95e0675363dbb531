package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;

import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.jboss.weld.environment.se.WeldContainer;
import org.jgroups.JChannel;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.KeyGenerator;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Map;

import static dev.idempotency.cdi.DeploymentErrorsTest.deploymentFailure;
import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyRuntime;

/** Issue 22 item 1: how the cluster's security is configured, and the deployments that fail for it. */
class CacheSecurityDeploymentTest {

    static final String KEYS_TO_SET = "Set idempotency.cache.secret (a shared secret of at least 32 characters, the same on "
            + "every node) or idempotency.cache.keystore with idempotency.cache.keystore-password and "
            + "idempotency.cache.keystore-alias (a secret key entry); or, on a network secured otherwise, "
            + "idempotency.cache.allow-insecure-transport=true";

    @ApplicationScoped
    public static class Greeter {
        @Idempotent
        public String greet(@IdempotencyKey String key, String name) {
            return "hello " + name;
        }
    }

    @Test
    void aClusterOffLoopbackWithoutASecretFailsTheDeploymentNamingTheKeys() {
        for (String address : new String[] {"10.1.2.3", "0.0.0.0"}) {
            assertThat(deploymentFailure(Map.of("idempotency.cache.mode", "cluster", "idempotency.cache.bind-address", address),
                    Greeter.class))
                    .contains("The clustered cache would leave loopback (idempotency.cache.bind-address=" + address
                            + ") unauthenticated and unencrypted")
                    .contains(KEYS_TO_SET);
        }
    }

    @Test
    void theOptOutAndASecretAreEachEnoughAtDeployment() {
        for (Map<String, String> ok : java.util.List.of(
                Map.of("idempotency.cache.allow-insecure-transport", "true"),
                Map.of("idempotency.cache.secret", "x".repeat(32)))) {
            Map<String, String> config = new java.util.HashMap<>(ok);
            config.put("idempotency.cache.mode", "cluster");
            config.put("idempotency.cache.bind-address", "10.1.2.3");
            ConfigErrors errors = new ConfigErrors();
            GlobalSettings s = GlobalSettings.read(IdempotencyWeld.config(config), errors);
            assertThat(errors.all()).as(ok.toString()).isEmpty();
            assertThat(String.valueOf(s)).as("the secret is never printed").doesNotContain("x".repeat(32));
        }
    }

    @Test
    void badSecretsNameTheirKey(@TempDir Path dir) throws Exception {
        assertThat(deploymentFailure(Map.of("idempotency.cache.secret", "too short"), Greeter.class))
                .contains("idempotency.cache.secret is 9 characters long; it must be at least 32");
        assertThat(deploymentFailure(Map.of("idempotency.cache.secret", "x".repeat(40), "idempotency.cache.keystore", "k.p12"),
                Greeter.class))
                .contains("Both idempotency.cache.secret and idempotency.cache.keystore are set: set one");
        assertThat(deploymentFailure(Map.of("idempotency.cache.keystore", dir.resolve("missing.p12").toString()), Greeter.class))
                .contains("idempotency.cache.keystore=" + dir.resolve("missing.p12") + " is not a readable file");
        Path store = keyStore(dir, "idempotency", "changeit");
        assertThat(deploymentFailure(Map.of("idempotency.cache.keystore", store.toString(),
                "idempotency.cache.keystore-password", "wrong"), Greeter.class))
                .contains("idempotency.cache.keystore=" + store + " cannot be read with idempotency.cache.keystore-password");
        assertThat(deploymentFailure(Map.of("idempotency.cache.keystore", store.toString(),
                "idempotency.cache.keystore-password", "changeit", "idempotency.cache.keystore-alias", "other"), Greeter.class))
                .contains("idempotency.cache.keystore=" + store + " has no entry other (idempotency.cache.keystore-alias)");
    }

    /** A key store's secret key entry secures the built-in stack of a deployment, as a text secret does. */
    @Test
    void aKeyStoreSecuresTheBuiltInCluster(@TempDir Path dir) throws Exception {
        Path store = keyStore(dir, "idempotency", "changeit");
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory", "idempotency.cache.mode", "cluster",
                "idempotency.cache.bind-port", "7941", "idempotency.cache.initial-hosts", "127.0.0.1[7941]",
                "idempotency.cache.keystore", store.toString(), "idempotency.cache.keystore-password", "changeit"),
                Greeter.class).initialize()) {
            assertThat(c.select(Greeter.class).get().greet("k", "ada")).isEqualTo("hello ada");
            var cache = (dev.idempotency.cache.ClusterRecordCache) c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.awaitWrites(java.time.Duration.ofSeconds(10))).as("the record's write, off the request's thread, done").isTrue();
            JChannel channel = ((JGroupsTransport) org.infinispan.factories.GlobalComponentRegistry.componentOf(
                    cache.cache().getCacheManager(), org.infinispan.remoting.transport.Transport.class)).getChannel();
            assertThat((Object) channel.getProtocolStack().findProtocol(SYM_ENCRYPT.class)).isNotNull();
            assertThat((Object) channel.getProtocolStack().findProtocol(AUTH.class)).isNotNull();
            assertThat(cache.size()).isEqualTo(1);
        }
    }

    /** A PKCS12 key store with an AES-256 secret key entry, as keytool -genseckey makes it. */
    static Path keyStore(Path dir, String alias, String password) throws Exception {
        KeyGenerator aes = KeyGenerator.getInstance("AES");
        aes.init(256);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setEntry(alias, new KeyStore.SecretKeyEntry(aes.generateKey()), new KeyStore.PasswordProtection(password.toCharArray()));
        Path file = dir.resolve("cluster.p12");
        try (OutputStream out = Files.newOutputStream(file)) {
            ks.store(out, password.toCharArray());
        }
        return file;
    }
}
