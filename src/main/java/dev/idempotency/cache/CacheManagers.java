package dev.idempotency.cache;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.GlobalSettings;

import org.infinispan.Cache;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.partitionhandling.PartitionHandling;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.jgroups.JChannel;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.Encrypt;
import org.jgroups.protocols.FD_ALL3;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.FRAG4;
import org.jgroups.protocols.MERGE3;
import org.jgroups.protocols.MFC;
import org.jgroups.protocols.SERIALIZE;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.UFC;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.VERIFY_SUSPECT2;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.STABLE;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The library's own cache manager and its cache {@value #CACHE}: local when alone; when clustered over JGroups,
 * replicated (every node holds every entry) or distributed (each entry on a few owners), synchronously. The default TCP stack is built in code (bind address and port, TCPPING
 * initial hosts), so nothing is read from system properties; a JGroups XML file replaces it.
 *
 * <p>With a shared secret ({@link CacheKeys#fromSecret()}) the built-in stack is authenticated and encrypted the way
 * Infinispan documents for its cluster transport: {@code SYM_ENCRYPT} (AES-256, CBC) right above the failure
 * detection, {@code SERIALIZE} above it (so that headers, not only payloads, travel encrypted) and {@code AUTH} under
 * {@code GMS} (a joining node proves it holds the secret). Without one, a stack whose transport binds off loopback
 * is refused unless the network is declared secured otherwise.
 */
public final class CacheManagers {

    public static final String CACHE = "idempotency-records";

    private CacheManagers() {
    }

    /**
     * @param clustered    replicate across the nodes of a JGroups cluster
     * @param clusterName  the cluster's name
     * @param nodeName     this node's name in the cluster
     * @param stackFile    a JGroups XML stack (file or class path resource), or {@code null} for the built-in TCP one
     * @param bindAddress  the built-in stack's bind address
     * @param bindPort     the built-in stack's first port (it tries ten)
     * @param initialHosts the built-in stack's members to find, {@code host[port],host[port]}
     * @param maxEntries   the most records held; the least recently used go first
     */
    public static EmbeddedCacheManager start(boolean clustered, String clusterName, String nodeName, String stackFile,
                                             String bindAddress, int bindPort, String initialHosts, long maxEntries) {
        return start(clustered, clusterName, nodeName, stackFile, bindAddress, bindPort, initialHosts, maxEntries, null, false);
    }

    /**
     * As above, and:
     *
     * @param keys                   the keys of the cluster's shared secret (only {@link CacheKeys#fromSecret()} ones
     *                               secure the built-in stack), or {@code null}
     * @param allowInsecureTransport a stack without encryption may bind off loopback (the network is secured otherwise)
     * @throws IdempotencyConfigurationException a stack that would leave loopback unencrypted, unless allowed
     */
    public static EmbeddedCacheManager start(boolean clustered, String clusterName, String nodeName, String stackFile,
                                             String bindAddress, int bindPort, String initialHosts, long maxEntries,
                                             CacheKeys keys, boolean allowInsecureTransport) {
        return start(clustered, clusterName, nodeName, stackFile, bindAddress, bindPort, initialHosts, maxEntries, keys,
                allowInsecureTransport, 0);
    }

    /**
     * As above, and:
     *
     * @param owners a clustered cache's copies of each entry: 0 replicates it to every node ({@code REPL_SYNC}), more
     *               distributes it to that many nodes ({@code DIST_SYNC})
     */
    public static EmbeddedCacheManager start(boolean clustered, String clusterName, String nodeName, String stackFile,
                                             String bindAddress, int bindPort, String initialHosts, long maxEntries,
                                             CacheKeys keys, boolean allowInsecureTransport, int owners) {
        return start(clustered, clusterName, nodeName, stackFile, bindAddress, bindPort, initialHosts, maxEntries, keys,
                allowInsecureTransport, owners, ClusterTuning.DEFAULT);
    }

    /**
     * As above, and:
     *
     * @param tuning how long a cache call waits for other members, and how soon the built-in stack suspects a silent one
     */
    public static EmbeddedCacheManager start(boolean clustered, String clusterName, String nodeName, String stackFile,
                                             String bindAddress, int bindPort, String initialHosts, long maxEntries,
                                             CacheKeys keys, boolean allowInsecureTransport, int owners, ClusterTuning tuning) {
        CacheKeys secret = keys != null && keys.fromSecret() ? keys : null;
        GlobalConfigurationBuilder global = clustered
                ? GlobalConfigurationBuilder.defaultClusteredBuilder()
                : new GlobalConfigurationBuilder().nonClusteredDefault();
        global.cacheManagerName("idempotency-" + nodeName).jmx().disable();
        global.cacheContainer().statistics(false);
        if (clustered) {
            global.transport().clusterName(clusterName).nodeName(nodeName);
            try {
                JChannel channel = stackFile == null
                        ? new JChannel(tcpStack(bindAddress, bindPort, initialHosts, secret, tuning.failureDetection()))
                        : new JChannel(stackFile);
                if (!allowInsecureTransport) {
                    refuseInsecure(channel, stackFile);
                }
                channel.name(nodeName);
                global.transport().transport(new JGroupsTransport(channel));
            } catch (IdempotencyConfigurationException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("Could not build the JGroups channel: " + e.getMessage(), e);
            }
        }
        // Through a holder: DefaultCacheManager(GlobalConfiguration, ...) reads the configuration again and replaces
        // the transport with a new instance of its class, dropping the channel built above (Infinispan then ran its
        // default UDP stack, on the host's address and a multicast group, whatever was configured here).
        DefaultCacheManager manager = new DefaultCacheManager(
                new ConfigurationBuilderHolder(CacheManagers.class.getClassLoader(), global), false);
        defineCache(manager, maxEntries, owners, tuning);
        manager.start();
        return manager;
    }

    /** Defines the records cache on a manager (the library's or the application's) unless it exists: replicated when clustered. */
    public static Cache<String, byte[]> defineCache(EmbeddedCacheManager manager, long maxEntries) {
        return defineCache(manager, maxEntries, 0);
    }

    /**
     * Defines the records cache on a manager (the library's or the application's) unless it exists.
     *
     * @param owners when the manager is clustered: 0 replicates every entry to every node, more distributes each entry
     *               to that many nodes (the others read it from them)
     */
    public static Cache<String, byte[]> defineCache(EmbeddedCacheManager manager, long maxEntries, int owners) {
        return defineCache(manager, maxEntries, owners, ClusterTuning.DEFAULT);
    }

    /**
     * As above; a clustered cache's calls wait at most {@link ClusterTuning#timeout()} for the other members (Infinispan's
     * defaults are 15 s for a remote call and 10 s for a lock), and a split cluster goes on on both sides
     * ({@code ALLOW_READ_WRITES}: the store judges, the cache only saves it questions) and merges by
     * {@link RecordMergePolicy}, which keeps no copy that could be a wrong answer.
     */
    public static Cache<String, byte[]> defineCache(EmbeddedCacheManager manager, long maxEntries, int owners, ClusterTuning tuning) {
        if (manager.getCacheConfiguration(CACHE) == null) {
            boolean clustered = manager.getCacheManagerConfiguration().isClustered();
            ConfigurationBuilder c = new ConfigurationBuilder();
            c.clustering().cacheMode(!clustered ? CacheMode.LOCAL : owners > 0 ? CacheMode.DIST_SYNC : CacheMode.REPL_SYNC);
            if (clustered && owners > 0) {
                c.clustering().hash().numOwners(owners);
            }
            if (clustered) {
                long timeout = Math.max(1, tuning.timeout().toMillis());
                c.clustering().remoteTimeout(timeout);
                c.locking().lockAcquisitionTimeout(timeout);
                c.clustering().partitionHandling().whenSplit(PartitionHandling.ALLOW_READ_WRITES).mergePolicy(new RecordMergePolicy());
            }
            c.memory().maxCount(maxEntries);
            c.expiration().wakeUpInterval(60_000);
            c.statistics().disable();
            manager.defineConfiguration(CACHE, c.build());
        }
        return manager.getStatus().allowInvocations() ? manager.getCache(CACHE) : null;
    }

    /** A stack whose transport binds off loopback with no encryption protocol (SYM_ENCRYPT, ASYM_ENCRYPT) is refused. */
    private static void refuseInsecure(JChannel channel, String stackFile) {
        TP tp = channel.getProtocolStack().getTransport();
        InetAddress bind = tp.getBindAddress();
        boolean encrypted = channel.getProtocolStack().getProtocols().stream().anyMatch(p -> p instanceof Encrypt);
        if (!encrypted && (bind == null || !bind.isLoopbackAddress())) {
            channel.close();
            throw new IdempotencyConfigurationException(GlobalSettings.insecureTransportMessage(
                    (stackFile == null ? "the built-in stack" : "the JGroups stack " + stackFile + ", which has no SYM_ENCRYPT or ASYM_ENCRYPT,")
                            + " binds to " + (bind == null ? "the host's address" : bind.getHostAddress())));
        }
    }

    /**
     * @param failureDetection how long a member may stay silent before it is suspected (JGroups' own default is 40 s,
     *                         and a silent member, a partition or a paused JVM, holds every synchronous cache write up
     *                         for the whole of it): heartbeats every quarter of it, a suspicion checked for a sixth of
     *                         it, at least 0.5 s, before the member is excluded; merges looked for every 1 to 4 s, so
     *                         that the views merge within seconds of a heal
     */
    static List<org.jgroups.stack.Protocol> tcpStack(String bindAddress, int bindPort, String initialHosts, CacheKeys secret,
                                                     java.time.Duration failureDetection) throws Exception {
        List<java.net.InetSocketAddress> hosts = new ArrayList<>();
        for (String h : initialHosts.split(",")) {
            String host = h.strip();
            if (host.isEmpty()) {
                continue;
            }
            int open = host.indexOf('[');
            hosts.add(open < 0 ? new java.net.InetSocketAddress(host, bindPort)
                    : new java.net.InetSocketAddress(host.substring(0, open), Integer.parseInt(host.substring(open + 1, host.indexOf(']')))));
        }
        TCP tcp = new TCP();
        tcp.setBindAddress(InetAddress.getByName(bindAddress));
        tcp.setBindPort(bindPort);
        tcp.setPortRange(10);
        // JGroups' own default leaves Nagle's algorithm on: every synchronous write then waited for the peer's delayed
        // ACK (20 to 40 ms a put between two nodes here; BENCHMARKS.md, "Scaling"). Infinispan's stacks turn it off.
        tcp.tcpNodelay(true);
        TCPPING ping = new TCPPING();
        ping.setInitialHosts(hosts);
        ping.setPortRange(0);
        List<org.jgroups.stack.Protocol> stack = new ArrayList<>();
        stack.add(tcp);
        stack.add(ping);
        stack.add(new MERGE3().setMinInterval(1000).setMaxInterval(4000));
        stack.add(new FD_SOCK2());
        long detection = Math.max(1000, failureDetection.toMillis());
        stack.add(new FD_ALL3().setTimeout(detection).setInterval(Math.max(250, detection / 4)));
        stack.add(new VERIFY_SUSPECT2().setTimeout(Math.max(500, detection / 6)));
        if (secret != null) {
            // Infinispan's documented place for SYM_ENCRYPT: after VERIFY_SUSPECT2, below NAKACK2. What travels below
            // it (discovery, failure detection, merge probes) carries no cache data.
            SYM_ENCRYPT encrypt = new SYM_ENCRYPT().setSecretKey(secret.transportKey());
            encrypt.symAlgorithm("AES/CBC/PKCS5Padding");
            encrypt.symIvLength(16);
            stack.add(encrypt);
            stack.add(new SERIALIZE());
        }
        stack.add(new NAKACK2().useMcastXmit(false));
        stack.add(new UNICAST3());
        stack.add(new STABLE());
        if (secret != null) {
            SecretToken token = new SecretToken(secret.joinProof());
            AUTH auth = new AUTH().setAuthToken(token);
            token.setAuth(auth);
            stack.add(auth);
        }
        stack.add(new GMS().setJoinTimeout(2000));
        stack.add(new UFC());
        stack.add(new MFC());
        stack.add(new FRAG4());
        return stack;
    }
}
