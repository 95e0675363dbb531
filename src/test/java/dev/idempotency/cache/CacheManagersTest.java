package dev.idempotency.cache;

import dev.idempotency.IdempotencyConfigurationException;

import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.SERIALIZE;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.UDP;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The clustered cache manager runs the JGroups stack the library built from its settings (bind address, port,
 * initial hosts, node name), not Infinispan's default UDP stack on the host's address and a multicast group.
 */
class CacheManagersTest {

    @Test
    void theConfiguredStackIsTheOneThatRuns() {
        EmbeddedCacheManager manager = CacheManagers.start(true, "stack-test", "node-x", null, "127.0.0.1", 7870,
                "127.0.0.1[7870]", 100);
        try {
            JChannel channel = ((JGroupsTransport) org.infinispan.factories.GlobalComponentRegistry.componentOf(manager,
                    org.infinispan.remoting.transport.Transport.class)).getChannel();
            assertThat((Object) channel.getProtocolStack().findProtocol(UDP.class)).as("no multicast stack").isNull();
            assertThat((Object) channel.getProtocolStack().findProtocol(TCP.class)).isNotNull();
            assertThat(((TCP) channel.getProtocolStack().findProtocol(TCP.class)).tcpNodelay())
                    .as("Nagle off: a synchronous write does not wait for a delayed ACK").isTrue();
            assertThat((Object) channel.getProtocolStack().findProtocol(TCPPING.class)).isNotNull();
            assertThat(channel.getName()).isEqualTo("node-x");
            Object physical = channel.down(new Event(Event.GET_PHYSICAL_ADDRESS, channel.getAddress()));
            assertThat(String.valueOf(physical)).startsWith("127.0.0.1:787");
            assertThat(manager.getCache(CacheManagers.CACHE).getCacheConfiguration().clustering().cacheMode().isReplicated()).isTrue();
        } finally {
            manager.stop();
        }
    }

    static JChannel channel(EmbeddedCacheManager manager) {
        return ((JGroupsTransport) org.infinispan.factories.GlobalComponentRegistry.componentOf(manager,
                org.infinispan.remoting.transport.Transport.class)).getChannel();
    }

    /** Issue 22: with a secret the stack is encrypted (SYM_ENCRYPT, SERIALIZE above it) and authenticated (AUTH under GMS). */
    @Test
    void withASecretTheStackIsEncryptedAndAuthenticatedAndTwoNodesReplicate() throws Exception {
        CacheKeys keys = CacheKeys.of("a secret of thirty-two characters, or more".getBytes(StandardCharsets.UTF_8));
        String hosts = "127.0.0.1[7871],127.0.0.1[7872]";
        EmbeddedCacheManager a = CacheManagers.start(true, "secure-test", "node-a", null, "127.0.0.1", 7871, hosts, 100, keys, false);
        EmbeddedCacheManager b = CacheManagers.start(true, "secure-test", "node-b", null, "127.0.0.1", 7872, hosts, 100, keys, false);
        try {
            List<Class<?>> order = channel(a).getProtocolStack().getProtocols().stream().<Class<?>>map(Object::getClass).toList();
            // getProtocols() lists from the top: GMS above AUTH, ..., SERIALIZE above SYM_ENCRYPT.
            assertThat(order).containsSubsequence(AUTH.class, SERIALIZE.class, SYM_ENCRYPT.class, TCPPING.class, TCP.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (a.getMembers().size() < 2 || b.getMembers().size() < 2) {
                assertThat(System.nanoTime()).as("the two nodes form a cluster").isLessThan(deadline);
                Thread.sleep(50);
            }
            CacheManagers.defineCache(a, 100).put("k", new byte[] {1, 2, 3});
            assertThat(CacheManagers.defineCache(b, 100).get("k")).containsExactly(1, 2, 3);
        } finally {
            b.stop();
            a.stop();
        }
    }

    /**
     * The optimistic claim's marker in a replicated cache is removed by its holder from any node, and by no one else: a
     * conditional remove compares the marker's bytes by content (a replicated copy, or bytes built anew, are other
     * arrays), so a marker never outlives its call for its whole lease.
     */
    @Test
    void aMarkerInAReplicatedCacheIsRemovedByItsHolderFromAnyNodeAndByNoOneElse() throws Exception {
        EmbeddedCacheManager[] pair = twoNodes("marker-test", 7874);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        try {
            java.time.Clock clock = java.time.Clock.systemUTC();
            InfinispanRecordCache onA = new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals());
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals());
            dev.idempotency.spi.ScopedKey key = new dev.idempotency.spi.ScopedKey("payments", "alice", "k-1");
            java.time.Duration lease = java.time.Duration.ofMinutes(5);

            assertThat(onA.mark(key, "node-a/1", lease)).as("the first call marks the key").isTrue();
            assertThat(onB.mark(key, "node-b/1", lease)).as("a duplicate on the other node sees the marker").isFalse();
            onB.unmark(key, "node-b/1");
            assertThat(onB.mark(key, "node-b/2", lease)).as("another holder's unmark leaves the marker").isFalse();
            onB.unmark(key, "node-a/1"); // the holder's own marker, its bytes built anew on the other node
            assertThat(onB.mark(key, "node-b/3", lease)).as("the holder's unmark removes it, from any node").isTrue();
            onA.unmark(key, "node-b/3");
            assertThat(onA.mark(key, "node-a/2", lease)).isTrue();
        } finally {
            b.stop();
            a.stop();
        }
    }

    /**
     * A completion whose write waited (a clustered cache's completions are written after the commit, by a thread of their
     * own) while another node released or deleted the key never puts the old answer back over that node's tombstone; a
     * completion of a call that claimed the key after the deletion replaces it, on both nodes.
     */
    @Test
    void aLateCompletionNeverOverwritesALaterTombstoneOfAnotherNode() throws Exception {
        EmbeddedCacheManager[] pair = twoNodes("tombstone-test", 7876);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        try {
            dev.idempotency.testing.FakeClock clock = new dev.idempotency.testing.FakeClock();
            CacheKeys keys = CacheKeys.unprotected("tombstone-test"); // the same on both nodes, as a secret makes them
            InfinispanRecordCache onA = new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            dev.idempotency.spi.ScopedKey key = new dev.idempotency.spi.ScopedKey("payments", "alice", "k-late");

            dev.idempotency.spi.IdempotencyRecord first = finishedAt(key, clock.instant(), "first");
            clock.advance(java.time.Duration.ofMillis(5));
            onB.evict(key); // deleted on node B after the first call finished on node A
            clock.advance(java.time.Duration.ofMillis(5));
            onA.put(first); // A's write of that completion, late
            assertThat(onA.get(key)).as("the deleted answer, on the node that wrote it late").isEmpty();
            assertThat(onB.get(key)).as("the deleted answer, on the node that deleted it").isEmpty();

            clock.advance(java.time.Duration.ofSeconds(1));
            dev.idempotency.spi.IdempotencyRecord again = finishedAt(key, clock.instant(), "again");
            onB.put(again); // a call that claimed the key after the deletion, on node B
            assertThat(onA.get(key)).map(r -> new String(r.response(), java.nio.charset.StandardCharsets.UTF_8)).contains("again");
            onA.put(first); // the late write once more: the newer record stays
            assertThat(onB.get(key)).as("a newer record, on the other node").map(r -> new String(r.response(),
                    java.nio.charset.StandardCharsets.UTF_8)).contains("again");
            assertThat(onA.get(key)).map(r -> new String(r.response(), java.nio.charset.StandardCharsets.UTF_8)).contains("again");
            clock.advance(java.time.Duration.ofMillis(5));
            onA.evict(key);
            onB.put(again);
            assertThat(onA.get(key)).as("a tombstone written after the completion stays").isEmpty();
            // Within the clocks' margin, a completion just after a tombstone is not cached either (the store answers it).
            onB.put(finishedAt(key, clock.instant().plusMillis(InfinispanRecordCache.CLOCK_MARGIN_MILLIS / 2), "close"));
            assertThat(onA.get(key)).isEmpty();
        } finally {
            b.stop();
            a.stop();
        }
    }

    /** Two nodes of one cluster on loopback (ports {@code port} and the next), once each sees the other. */
    static EmbeddedCacheManager[] twoNodes(String cluster, int port) throws InterruptedException {
        String hosts = "127.0.0.1[" + port + "],127.0.0.1[" + (port + 1) + "]";
        EmbeddedCacheManager a = CacheManagers.start(true, cluster, "node-a", null, "127.0.0.1", port, hosts, 100);
        EmbeddedCacheManager b = CacheManagers.start(true, cluster, "node-b", null, "127.0.0.1", port + 1, hosts, 100);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (a.getMembers().size() < 2 || b.getMembers().size() < 2) {
            if (System.nanoTime() > deadline) {
                b.stop();
                a.stop();
                throw new AssertionError("the two nodes of " + cluster + " did not form a cluster within 60 s");
            }
            Thread.sleep(50); // the view's arrival, polled: JGroups has no wait for it here
        }
        return new EmbeddedCacheManager[] {a, b};
    }

    static dev.idempotency.spi.IdempotencyRecord finishedAt(dev.idempotency.spi.ScopedKey key, java.time.Instant at, String answer) {
        return dev.idempotency.spi.IdempotencyRecord.of(key).status(dev.idempotency.spi.RecordStatus.COMPLETED).fingerprint("fp")
                .response(answer.getBytes(java.nio.charset.StandardCharsets.UTF_8)).attempts(1).firstSeen(at).lastSeen(at)
                .completedAt(at).expiresAt(at.plus(java.time.Duration.ofHours(1))).version(1).build();
    }

    /** Without a secret, the built-in stack stays on loopback unless the network is declared secured otherwise. */
    @Test
    void offLoopbackWithoutASecretIsRefusedNamingTheKeys() {
        for (CacheKeys none : new CacheKeys[] {null, CacheKeys.unprotected("stack-test"), CacheKeys.random()}) {
            assertThatThrownBy(() -> CacheManagers.start(true, "stack-test", "node-x", null, "0.0.0.0", 7873,
                    "127.0.0.1[7873]", 100, none, false))
                    .isInstanceOf(IdempotencyConfigurationException.class)
                    .hasMessageContaining("binds to 0.0.0.0")
                    .hasMessageContaining("idempotency.cache.secret")
                    .hasMessageContaining("idempotency.cache.keystore")
                    .hasMessageContaining("idempotency.cache.allow-insecure-transport=true");
        }
    }

    /** A JGroups XML stack of the user's: refused off loopback when it has no SYM_ENCRYPT or ASYM_ENCRYPT. */
    @Test
    void aUsersStackOffLoopbackWithoutEncryptionIsRefused() throws Exception {
        // JGroups' XML parser wants an address of one of the host's interfaces.
        String address = java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
                .filter(a -> a instanceof java.net.Inet4Address && !a.isLoopbackAddress())
                .map(java.net.InetAddress::getHostAddress).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(address != null, "this host has no IPv4 address but loopback");
        Path plain = Files.createTempFile("plain-stack", ".xml");
        Files.writeString(plain, """
                <config xmlns="urn:org:jgroups">
                    <TCP bind_addr="%s" bind_port="7874"/>
                    <TCPPING initial_hosts="127.0.0.1[7874]" port_range="0"/>
                    <pbcast.NAKACK2 use_mcast_xmit="false"/>
                    <UNICAST3/>
                    <pbcast.STABLE/>
                    <pbcast.GMS join_timeout="1000"/>
                </config>
                """.formatted(address));
        assertThatThrownBy(() -> CacheManagers.start(true, "stack-test", "node-x", plain.toString(), "127.0.0.1", 7800,
                "127.0.0.1[7800]", 100, null, false))
                .isInstanceOf(IdempotencyConfigurationException.class)
                .hasMessageContaining("the JGroups stack " + plain + ", which has no SYM_ENCRYPT or ASYM_ENCRYPT, binds to " + address)
                .hasMessageContaining("idempotency.cache.secret");
        Files.delete(plain);
    }
}
