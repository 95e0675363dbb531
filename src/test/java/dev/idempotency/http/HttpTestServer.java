package dev.idempotency.http;

import dev.idempotency.testing.IdempotencyWeld;

import jakarta.ws.rs.SeBootstrap;
import jakarta.ws.rs.core.Application;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A real JAX-RS runtime with CDI in Java SE: Jakarta REST's {@link SeBootstrap} on RESTEasy, Undertow and
 * Weld, on a free port of 127.0.0.1, with the library picked up the way a WAR picks it up (its CDI extension
 * and its JAX-RS provider through {@code META-INF/services}; the application registers neither). The
 * configuration is the test's own, registered for the duration of the server.
 */
final class HttpTestServer implements AutoCloseable {

    final URI base;
    final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final SeBootstrap.Instance instance;
    private final ClassLoader loader = Thread.currentThread().getContextClassLoader();

    HttpTestServer(Map<String, String> properties, Class<?>... resources) throws Exception {
        Map<String, String> p = new HashMap<>(properties);
        Config config = IdempotencyWeld.config(p);
        ConfigProviderResolver.instance().registerConfig(config, loader);
        try {
            Set<Class<?>> classes = new java.util.HashSet<>(Set.of(resources));
            classes.add(BasicAuthFilter.class);
            Application app = new Application() {
                @Override
                public Set<Class<?>> getClasses() {
                    return classes;
                }
            };
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            instance = SeBootstrap.start(app, SeBootstrap.Configuration.builder().host("127.0.0.1").port(port).rootPath("/").build())
                    .toCompletableFuture().get(60, TimeUnit.SECONDS);
            base = URI.create("http://127.0.0.1:" + port + "/");
        } catch (Exception e) {
            ConfigProviderResolver.instance().releaseConfig(config);
            throw e;
        }
    }

    /** A server whose store is the JPA store on a fresh H2 database (JTA through Narayana). */
    static HttpTestServer onH2(Map<String, String> properties, Class<?>... resources) throws Exception {
        HttpResources.database = dev.idempotency.testing.TestDatabase.H2;
        HttpResources.poolSize = 48;
        return on(properties, resources);
    }

    /**
     * A server whose store is the JPA store on a fresh {@code database}, through a pool of {@code poolSize} connections
     * (JTA through Narayana).
     */
    static HttpTestServer on(dev.idempotency.testing.TestDatabase database, int poolSize, Map<String, String> properties,
                             Class<?>... resources) throws Exception {
        HttpResources.database = database;
        HttpResources.poolSize = poolSize;
        return on(properties, resources);
    }

    private static HttpTestServer on(Map<String, String> properties, Class<?>... resources) throws Exception {
        HttpResources.database.reset();
        Map<String, String> config = new HashMap<>(properties);
        dev.idempotency.testing.JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        return new HttpTestServer(config, resources);
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60));
    }

    HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<byte[]> sendForBytes(HttpRequest request) throws IOException, InterruptedException {
        return client.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    @Override
    public void close() throws Exception {
        try {
            instance.stop().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } finally {
            ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
        }
    }
}
