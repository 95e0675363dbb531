package dev.idempotency.cache;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigKey;
import dev.idempotency.config.RemoteCacheSettings;
import dev.idempotency.core.LocalCompletionSignals;

import org.infinispan.client.hotrod.RemoteCache;
import org.infinispan.client.hotrod.RemoteCacheManager;
import org.infinispan.client.hotrod.annotation.ClientCacheEntryCreated;
import org.infinispan.client.hotrod.annotation.ClientCacheEntryModified;
import org.infinispan.client.hotrod.annotation.ClientCacheFailover;
import org.infinispan.client.hotrod.annotation.ClientListener;
import org.infinispan.client.hotrod.configuration.Configuration;
import org.infinispan.client.hotrod.configuration.ConfigurationBuilder;
import org.infinispan.client.hotrod.configuration.NearCacheMode;
import org.infinispan.client.hotrod.configuration.ServerConfiguration;
import org.infinispan.client.hotrod.configuration.SslConfigurationBuilder;
import org.infinispan.client.hotrod.event.ClientCacheEntryCreatedEvent;
import org.infinispan.client.hotrod.event.ClientCacheEntryModifiedEvent;
import org.infinispan.client.hotrod.event.ClientCacheFailoverEvent;
import org.infinispan.client.hotrod.exceptions.HotRodClientException;
import org.infinispan.client.hotrod.exceptions.HotRodTimeoutException;
import org.infinispan.client.hotrod.exceptions.TransportException;
import org.infinispan.commons.configuration.StringConfiguration;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code idempotency.cache.mode=remote}: the records cache on an Infinispan Server cluster, reached over Hot Rod
 * ({@code org.infinispan:infinispan-client-hotrod}, an optional dependency: only this class and
 * {@link RemoteRecordCache} use it, and only in this mode). The cache is created (distributed, synchronous,
 * {@code idempotency.cache.owners} owners) unless it exists or the operator made it; a Hot Rod client listener wakes
 * this node's waiters when a key finishes on any node; an unreachable server degrades to the store
 * ({@link RemoteRecordCache}).
 *
 * <p>Over 400 lines on purpose: the only class that may name the optional Hot Rod client (its listener aside), so that
 * no other mode loads it (ArchitectureTest); the client's set-up, the cache's creation and the listener stay together
 * for that reason.
 */
public final class RemoteCaches {

    private static final Logger LOG = Logger.getLogger(RemoteCaches.class.getName());
    private RemoteCaches() {
    }

    /**
     * Reaches the records cache on the servers (or will, once they answer).
     *
     * @param s                      the {@code idempotency.cache.remote.*} keys
     * @param applicationManager     the application's {@code RemoteCacheManager} (qualified {@code @ForIdempotency}),
     *                               used as it is and never stopped here; {@code null}: one of the library's own
     * @param owners                 the copies of each entry in a cache this library creates
     * @param keys                   the key of the entries' MAC, the same on every application node
     * @param allowInsecureTransport servers off loopback may be reached without TLS, or entries keyed without a secret
     * @throws IdempotencyConfigurationException a misconfiguration: a missing cache, a properties file that cannot be
     *                                           read, servers off loopback without TLS or without a secret
     */
    public static ManagedRecordCache start(RemoteCacheSettings s, Object applicationManager, int owners, long maxEntries,
                                           CacheKeys keys, boolean allowInsecureTransport, Clock clock,
                                           LocalCompletionSignals signals) {
        boolean own = applicationManager == null;
        Configuration configuration = own ? configuration(s) : ((RemoteCacheManager) applicationManager).getConfiguration();
        if (!allowInsecureTransport) {
            refuseInsecure(configuration, keys);
        }
        List<String> servers = new ArrayList<>();
        for (ServerConfiguration server : configuration.servers()) {
            servers.add(server.host() + ":" + server.port());
        }
        String description = "an Infinispan Server cache (remote: " + s.cache() + " on " + String.join(", ", servers)
                + (s.create() ? ", created distributed with " + owners + " owners if absent" : ", made by the operator")
                + (s.nearCacheEntries() > 0 ? ", near cache of " + s.nearCacheEntries() : "") + ")";
        Duration bound = connectBound(s.timeout());
        // The library's own client is made anew at each reconnection: a Hot Rod connection can be left for good in a
        // state where it sends nothing (its operations then never finish), and only a new client leaves it behind.
        // The application's client is the application's: it is reused, and only the listener is registered again.
        Supplier<RemoteRecordCache.Connection> connect = own
                ? () -> {
                    RemoteCacheManager manager = new RemoteCacheManager(configuration, true);
                    try {
                        InfinispanRecordCache records = connect(manager, s, owners, maxEntries, description, keys, clock, signals);
                        return new RemoteRecordCache.Connection(records, () -> {
                            try {
                                records.close();
                            } finally {
                                bounded("stopping the Hot Rod client", bound, () -> {
                                    manager.stop();
                                    return null;
                                });
                            }
                        });
                    } catch (RuntimeException e) {
                        stopQuietly(manager);
                        throw e;
                    }
                }
                : () -> {
                    InfinispanRecordCache records = connect((RemoteCacheManager) applicationManager, s, owners, maxEntries,
                            description, keys, clock, signals);
                    return new RemoteRecordCache.Connection(records, records::close);
                };
        return new RemoteRecordCache(connect, s.retryInterval(), s.waitPoll(), description).start();
    }

    /** How long connecting (creating the cache, registering the listener) may take: 5 operations, at least 10 s. */
    static Duration connectBound(Duration timeout) {
        Duration five = timeout.multipliedBy(5);
        return five.compareTo(Duration.ofSeconds(10)) < 0 ? Duration.ofSeconds(10) : five;
    }

    private static void stopQuietly(RemoteCacheManager manager) {
        try {
            manager.stop();
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not stop the Hot Rod client", e);
        }
    }

    /**
     * A blocking call of the Hot Rod client that has no asynchronous form (creating a cache, adding a listener),
     * bounded: it runs on a thread of its own, and past {@code bound} the caller gets a {@link HotRodTimeoutException}
     * (the call is interrupted and left behind).
     */
    static <T> T bounded(String what, Duration bound, Callable<T> call) {
        FutureTask<T> task = new FutureTask<>(call);
        Thread thread = new Thread(task, "idempotency-hotrod-" + what.replace(' ', '-'));
        thread.setDaemon(true);
        thread.start();
        return await(task, bound, what);
    }

    /** Waits for a Hot Rod operation up to {@code bound}; a failure arrives as the client's own exception. */
    static <T> T await(Future<T> operation, Duration bound, String what) {
        try {
            return operation.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            operation.cancel(true);
            throw new HotRodTimeoutException(what + " did not finish within " + bound + " (" + ConfigKey.CACHE_REMOTE_TIMEOUT.key() + ")");
        } catch (InterruptedException e) {
            operation.cancel(true);
            Thread.currentThread().interrupt();
            throw new HotRodClientException("Interrupted while " + what, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new HotRodClientException(what + " failed: " + cause, cause);
        }
    }

    /** A remote cache's entries, each operation (the client's asynchronous form) bounded by {@code timeout}. */
    static Entries entries(RemoteCache<String, byte[]> cache, Duration timeout) {
        return new Entries() {
            @Override
            public byte[] get(String id) {
                return await(cache.getAsync(id), timeout, "reading a cache entry");
            }

            @Override
            public void put(String id, byte[] value, long lifespan, TimeUnit unit) {
                await(cache.putAsync(id, value, lifespan, unit), timeout, "writing a cache entry");
            }

            @Override
            public void putIfAbsent(String id, byte[] value, long lifespan, TimeUnit unit) {
                await(cache.putIfAbsentAsync(id, value, lifespan, unit), timeout, "writing a cache entry");
            }

            @Override
            public boolean add(String id, byte[] value, long lifespan, TimeUnit unit) {
                return await(cache.withFlags(org.infinispan.client.hotrod.Flag.FORCE_RETURN_VALUE).putIfAbsentAsync(id, value, lifespan, unit),
                        timeout, "writing a cache entry") == null;
            }

            @Override
            public void removeIf(String id, byte[] value) {
                // The client's own remove(key, value) compares arrays by identity, and a value read back is always a new
                // array: compared here by content, then removed by the version read with it.
                org.infinispan.client.hotrod.MetadataValue<byte[]> there = await(cache.getWithMetadataAsync(id), timeout,
                        "reading a cache entry");
                if (there != null && java.util.Arrays.equals(there.getValue(), value)) {
                    await(cache.removeWithVersionAsync(id, there.getVersion()), timeout, "removing a cache entry");
                }
            }

            @Override
            public void clear() {
                await(cache.clearAsync(), timeout, "clearing the cache");
            }

            @Override
            public void forEach(java.util.function.BiConsumer<String, byte[]> each) {
                try (org.infinispan.commons.util.CloseableIterator<java.util.Map.Entry<Object, Object>> entries = cache.retrieveEntries(null, 1000)) {
                    entries.forEachRemaining(e -> each.accept((String) e.getKey(), (byte[]) e.getValue()));
                }
            }

            @Override
            public int size() {
                return await(cache.sizeAsync(), timeout, "counting the cache's entries").intValue();
            }

            @Override
            public boolean containsKey(String id) {
                return await(cache.containsKeyAsync(id), timeout, "reading a cache entry");
            }
        };
    }

    /** The client's configuration: the properties file first, then the keys. */
    static Configuration configuration(RemoteCacheSettings s) {
        ConfigurationBuilder b = new ConfigurationBuilder();
        if (!s.propertiesFile().isEmpty()) {
            b.withProperties(properties(s.propertiesFile()));
        }
        if (!s.servers().isEmpty()) {
            b.servers().clear();
            b.addServers(String.join(";", s.servers()));
        } else if (b.servers().isEmpty()) {
            b.addServers(RemoteCacheSettings.DEFAULT_SERVER);
        }
        int timeout = (int) Math.min(Integer.MAX_VALUE, s.timeout().toMillis());
        b.connectionTimeout(timeout).socketTimeout(timeout);
        if (!s.username().isEmpty()) {
            b.security().authentication().enable().username(s.username()).password(s.password().toCharArray())
                    .realm(s.realm()).saslMechanism(s.saslMechanism());
        }
        if (s.tls()) {
            SslConfigurationBuilder ssl = b.security().ssl().enable();
            if (!s.trustStore().isEmpty()) {
                ssl.trustStoreFileName(s.trustStore()).trustStorePassword(s.trustStorePassword().toCharArray());
            }
            if (!s.sniHost().isEmpty()) {
                ssl.sniHostName(s.sniHost());
            }
        }
        if (s.nearCacheEntries() > 0) {
            b.remoteCache(s.cache()).nearCacheMode(NearCacheMode.INVALIDATED).nearCacheMaxEntries(s.nearCacheEntries());
        }
        try {
            return b.build();
        } catch (RuntimeException e) {
            throw new IdempotencyConfigurationException("The Hot Rod client's configuration is not valid ("
                    + ConfigKey.CACHE_REMOTE_PROPERTIES.key() + " and the keys under idempotency.cache.remote.): " + e.getMessage(), e);
        }
    }

    /** A Hot Rod client properties file: a file, else a class path resource. */
    private static Properties properties(String where) {
        Properties p = new Properties();
        File file = new File(where);
        try (InputStream in = file.isFile() ? Files.newInputStream(file.toPath()) : resource(where)) {
            if (in == null) {
                throw new IdempotencyConfigurationException(ConfigKey.CACHE_REMOTE_PROPERTIES.key() + "=" + where
                        + " is neither a file nor a class path resource");
            }
            p.load(in);
        } catch (IOException e) {
            throw new IdempotencyConfigurationException(ConfigKey.CACHE_REMOTE_PROPERTIES.key() + "=" + where
                    + " could not be read: " + e.getMessage(), e);
        }
        return p;
    }

    private static InputStream resource(String name) {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        InputStream in = context == null ? null : context.getResourceAsStream(name);
        return in != null ? in : RemoteCaches.class.getClassLoader().getResourceAsStream(name);
    }

    /**
     * Stored responses travel to the servers and back: off loopback, only over TLS and with entries whose MAC is keyed
     * by a secret (anyone else who may write to the cache could otherwise plant a response to be replayed).
     */
    private static void refuseInsecure(Configuration c, CacheKeys keys) {
        List<String> away = new ArrayList<>();
        for (ServerConfiguration server : c.servers()) {
            if (!loopback(server.host())) {
                away.add(server.host());
            }
        }
        if (away.isEmpty()) {
            return;
        }
        List<String> missing = new ArrayList<>();
        if (!c.security().ssl().enabled()) {
            missing.add(ConfigKey.CACHE_REMOTE_TLS.key() + "=true (with " + ConfigKey.CACHE_REMOTE_TRUST_STORE.key()
                    + " unless the JVM trusts the servers' certificate): stored responses would travel in clear");
        }
        if (!keys.fromSecret()) {
            missing.add(ConfigKey.CACHE_SECRET.key() + " (or " + ConfigKey.CACHE_KEYSTORE.key()
                    + "), the same on every application node: any other client of the cache could plant a response to be replayed");
        }
        if (!missing.isEmpty()) {
            throw new IdempotencyConfigurationException("The remote cache's servers " + away + " are off loopback; set "
                    + String.join("; and ", missing) + ". Or, on a network secured otherwise, "
                    + ConfigKey.CACHE_ALLOW_INSECURE_TRANSPORT.key() + "=true");
        }
    }

    private static boolean loopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (IOException e) {
            return false;
        }
    }

    /** Reaches (or creates) the cache and starts its listener; a server that cannot be reached throws as it is. */
    private static InfinispanRecordCache connect(RemoteCacheManager manager, RemoteCacheSettings s, int owners,
                                                 long maxEntries, String description, CacheKeys keys, Clock clock,
                                                 LocalCompletionSignals signals) {
        Duration bound = connectBound(s.timeout());
        RemoteCache<String, byte[]> cache;
        try {
            cache = bounded(s.create() ? "creating the cache" : "reaching the cache", bound, () -> s.create()
                    ? manager.administration().getOrCreateCache(s.cache(), new StringConfiguration(definition(s.cache(), owners, maxEntries)))
                    : manager.<String, byte[]>getCache(s.cache()));
        } catch (RuntimeException e) {
            if (unreachable(e)) {
                throw e;
            }
            throw new IdempotencyConfigurationException("The remote cache " + s.cache() + " could not be "
                    + (s.create() ? "reached or created (the user needs the CREATE permission, the deployer role by "
                    + "default, or the operator makes the cache and sets " + ConfigKey.CACHE_REMOTE_CREATE.key() + "=false)"
                    : "reached") + " (check " + ConfigKey.CACHE_REMOTE_USERNAME.key() + ", " + ConfigKey.CACHE_REMOTE_PASSWORD.key()
                    + " and the TLS keys too): " + e, e);
        }
        if (cache == null) {
            throw new IdempotencyConfigurationException("The servers have no cache named " + s.cache() + " ("
                    + ConfigKey.CACHE_REMOTE_CACHE.key() + ", and " + ConfigKey.CACHE_REMOTE_CREATE.key()
                    + "=false): make it, or let the library create it");
        }
        RemoteCache<String, byte[]> remote = cache;
        InfinispanRecordCache records = new InfinispanRecordCache(entries(remote, s.timeout()), description,
                () -> remote.getCacheTopologyInfo().getSegmentsPerServer().size(),
                r -> {
                    WakeUps listener = new WakeUps(r);
                    bounded("adding the cache's listener", bound, () -> {
                        remote.addClientListener(listener);
                        return null;
                    });
                    return () -> bounded("removing the cache's listener", bound, () -> {
                        remote.removeClientListener(listener);
                        return null;
                    });
                }, clock, signals, keys);
        LOG.log(Level.INFO, "Reached {0}", description);
        return records;
    }

    /** The definition of a cache this library creates: distributed, synchronous, entries as the client writes them. */
    static String definition(String name, int owners, long maxEntries) {
        return "<distributed-cache name=\"" + name + "\" mode=\"SYNC\" owners=\"" + owners + "\" statistics=\"false\">"
                + "<encoding media-type=\"application/x-protostream\"/>"
                + "<memory max-count=\"" + maxEntries + "\" when-full=\"REMOVE\"/>"
                + "<expiration interval=\"60000\"/>"
                + "</distributed-cache>";
    }

    /**
     * Whether a failure says the servers could not be reached, rather than refused what was asked: a failed
     * authentication or TLS handshake arrives as a transport failure too, and is a configuration's mistake.
     */
    static boolean unreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SecurityException || t instanceof javax.security.sasl.SaslException
                    || t instanceof javax.net.ssl.SSLException || t instanceof java.security.GeneralSecurityException) {
                return false;
            }
            // The server answered with an error (a refused authentication arrives so, inside a transport failure),
            // unless it says it is stopping or suspects a member: that is a server going away.
            if (t instanceof org.infinispan.client.hotrod.exceptions.HotRodClientException && !(t instanceof TransportException)
                    && !(t instanceof org.infinispan.client.hotrod.exceptions.HotRodTimeoutException)
                    && !(t instanceof org.infinispan.client.hotrod.exceptions.RemoteIllegalLifecycleStateException)
                    && !(t instanceof org.infinispan.client.hotrod.exceptions.RemoteNodeSuspectException)) {
                return false;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TransportException || t instanceof HotRodTimeoutException || t instanceof java.net.ConnectException
                    || t instanceof java.net.SocketTimeoutException || t instanceof java.nio.channels.ClosedChannelException
                    || t instanceof java.util.concurrent.TimeoutException || t instanceof java.net.UnknownHostException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** Wakes this node's waiters when an entry changes on the servers (a completion, a release, on any node). */
    @ClientListener
    public static final class WakeUps {
        private final InfinispanRecordCache records;

        WakeUps(InfinispanRecordCache records) {
            this.records = records;
        }

        @ClientCacheEntryCreated
        public void created(ClientCacheEntryCreatedEvent<String> e) {
            records.changed(e.getKey());
        }

        @ClientCacheEntryModified
        public void modified(ClientCacheEntryModifiedEvent<String> e) {
            records.changed(e.getKey());
        }

        /** The listener moved to another server: events in between may be lost, so every waiter looks again. */
        @ClientCacheFailover
        public void failover(ClientCacheFailoverEvent e) {
            records.missedEvents();
        }
    }
}
