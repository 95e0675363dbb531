package dev.idempotency.config;

import java.time.Duration;
import java.util.List;

/**
 * The keys under {@code idempotency.cache.remote.} ({@code idempotency.cache.mode=remote}): how to reach an Infinispan
 * Server cluster over Hot Rod, and the cache the records live in there. The password is never printed.
 *
 * @param servers            {@code host:port} of the servers to contact first; empty: those of the properties file,
 *                           else {@code 127.0.0.1:11222}
 * @param cache              the cache's name on the servers
 * @param create             create the cache (distributed, {@code idempotency.cache.owners} owners) if it is absent;
 *                           {@code false}: the operator made it, and its absence fails the deployment
 * @param username           SASL user name; empty: no authentication
 * @param password           SASL password
 * @param realm              SASL realm
 * @param saslMechanism      SASL mechanism
 * @param tls                connect with TLS
 * @param trustStore         trust store file (PKCS12 or JKS) with the servers' certificate or its CA; empty: the JVM's
 * @param trustStorePassword the trust store's password
 * @param sniHost            the TLS SNI host name; empty: none
 * @param propertiesFile     a Hot Rod client properties file (file or class path resource) read first; empty: none
 * @param nearCacheEntries   the most entries held in this JVM (a near cache, invalidated by the servers); 0: none
 * @param timeout            connect and socket timeout of a Hot Rod operation
 * @param retryInterval      how long the cache is bypassed (the store answers) after it failed, before it is tried again
 * @param waitPoll           how long a waiting duplicate waits for the servers' wake-up before it looks at the store
 */
public record RemoteCacheSettings(
        List<String> servers,
        String cache,
        boolean create,
        String username,
        String password,
        String realm,
        String saslMechanism,
        boolean tls,
        String trustStore,
        String trustStorePassword,
        String sniHost,
        String propertiesFile,
        int nearCacheEntries,
        Duration timeout,
        Duration retryInterval,
        Duration waitPoll) {

    /** The servers contacted when neither the configuration nor a properties file names any. */
    public static final String DEFAULT_SERVER = "127.0.0.1:11222";

    public RemoteCacheSettings {
        servers = List.copyOf(servers);
    }

    /** {@code host[:port]} separated by commas or semicolons; the port defaults to 11222. */
    public static List<String> servers(String key, String value) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (String s : ConfigValues.text(key, value, 4096, false).split("[,;]")) {
            String server = s.strip();
            if (server.isEmpty()) {
                continue;
            }
            if (!server.matches("(\\[[0-9A-Fa-f:.]+]|[^:\\s\\[\\]]+)(:\\d{1,5})?")) {
                throw new IllegalArgumentException(key + "=" + ConfigValues.shown(value) + " must be host:port, host:port (a server without a port: 11222)");
            }
            out.add(server.matches(".*:\\d{1,5}") && !server.endsWith("]") ? server : server + ":11222");
        }
        return out;
    }

    @Override
    public String toString() {
        return "RemoteCacheSettings[servers=" + servers + ", cache=" + cache + ", create=" + create + ", username=" + username
                + ", password=" + (password.isEmpty() ? "" : "***") + ", realm=" + realm + ", saslMechanism=" + saslMechanism
                + ", tls=" + tls + ", trustStore=" + trustStore + ", sniHost=" + sniHost + ", propertiesFile=" + propertiesFile
                + ", nearCacheEntries=" + nearCacheEntries + ", timeout=" + timeout + ", retryInterval=" + retryInterval + ", waitPoll=" + waitPoll + "]";
    }
}
