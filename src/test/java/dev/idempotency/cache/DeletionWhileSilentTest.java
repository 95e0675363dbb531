package dev.idempotency.cache;

import dev.idempotency.IdempotencyCacheException;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.TransactionBridge;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

import org.infinispan.manager.EmbeddedCacheManager;
import org.jgroups.protocols.DISCARD;
import org.jgroups.protocols.TCP;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An operator deletes a record on node A while node B has gone silent (before anyone notices: the deletion's
 * tombstone cannot reach B within the cluster timeout). Deleted from the store anyway, B would go on answering the
 * record from its copy until A reached the cache again, or for the record's whole life if A stopped first. The
 * deletion is refused instead, the record kept, and it succeeds once the cache answers again: at no moment does a
 * node answer a record the store no longer holds.
 */
class DeletionWhileSilentTest {

    @Test
    void aDeletionWhoseTombstoneCannotReachTheOtherNodeDeletesNothing() throws Exception {
        EmbeddedCacheManager[] pair = CacheManagersTest.twoNodes("deletion-silent-test", 7986);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        ClusterRecordCache onA = null;
        try {
            Clock clock = Clock.systemUTC();
            CacheKeys keys = CacheKeys.unprotected("deletion-silent-test");
            onA = ClusterRecordCache.start(new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new LocalCompletionSignals(), keys), ClusterTuning.DEFAULT);
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new LocalCompletionSignals(), keys);
            InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
            IdempotencyEngine engineA = new IdempotencyEngine(store, clock, "node-a", TransactionBridge.NONE,
                    new LocalCompletionSignals(), Runnable::run, Duration.ofSeconds(10), onA);
            ScopedKey key = new ScopedKey("payments", "alice", "deleted-while-b-is-silent");
            IdempotencyRecord record = CacheManagersTest.finishedAt(key, clock.instant().minusSeconds(5), "charged");
            store.importAll(List.of(record));
            onB.put(record);
            assertThat(onA.get(key)).as("replicated to A").isPresent();

            // B stops answering A (and A, B); neither has noticed yet (failure detection takes 6 s)
            DISCARD[] d = {new DISCARD(), new DISCARD()};
            CacheManagersTest.channel(a).getProtocolStack().insertProtocol(d[0], ProtocolStack.Position.ABOVE, TCP.class);
            CacheManagersTest.channel(b).getProtocolStack().insertProtocol(d[1], ProtocolStack.Position.ABOVE, TCP.class);
            d[0].addIgnoredMembers(CacheManagersTest.channel(b).getAddress());
            d[1].addIgnoredMembers(CacheManagersTest.channel(a).getAddress());

            assertThatThrownBy(() -> engineA.delete(new Deletion.All(), 10)).isInstanceOf(IdempotencyCacheException.class)
                    .hasMessageContaining("was not deleted");
            assertThat(store.find(key)).as("the record is kept").isPresent();
            assertThat(answer(onB, key)).as("B answers it, and the store still holds it").isEqualTo("charged");

            d[0].resetIgnoredMembers();
            d[1].resetIgnoredMembers();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!onA.reachable() && System.nanoTime() < deadline) {
                onA.holds(key); // a call on a bypassed cache has it probed again, in the background
                Thread.sleep(50);
            }
            assertThat(onA.reachable()).as("A reaches the cache again").isTrue();
            assertThat(engineA.delete(new Deletion.All(), 10)).as("deleted once the cache answers").isEqualTo(1);
            assertThat(store.find(key)).isEmpty();
            assertThat(answer(onB, key)).as("and B no longer answers it").isNull();
            assertThat(answer(onA, key)).isNull();
        } finally {
            if (onA != null) {
                onA.close();
            }
            b.stop();
            a.stop();
        }
    }

    private static String answer(dev.idempotency.spi.RecordCache cache, ScopedKey key) {
        return cache.get(key).map(r -> new String(r.response(), StandardCharsets.UTF_8)).orElse(null);
    }
}
