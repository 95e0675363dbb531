package dev.idempotency.cache;

import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.UDP;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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
            assertThat((Object) channel.getProtocolStack().findProtocol(TCPPING.class)).isNotNull();
            assertThat(channel.getName()).isEqualTo("node-x");
            Object physical = channel.down(new Event(Event.GET_PHYSICAL_ADDRESS, channel.getAddress()));
            assertThat(String.valueOf(physical)).startsWith("127.0.0.1:787");
            assertThat(manager.getCache(CacheManagers.CACHE).getCacheConfiguration().clustering().cacheMode().isReplicated()).isTrue();
        } finally {
            manager.stop();
        }
    }
}
