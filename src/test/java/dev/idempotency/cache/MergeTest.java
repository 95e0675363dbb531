package dev.idempotency.cache;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import org.infinispan.manager.EmbeddedCacheManager;
import org.jgroups.protocols.DISCARD;
import org.jgroups.protocols.TCP;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a merge writes, seen while it happens and after it: no node ever answers a record another node deleted or
 * replaced during the split, not even for a moment, and the merged tombstone keeps out what any side's deletion kept out.
 */
class MergeTest {

    private static String answer(Optional<IdempotencyRecord> r) {
        return r.map(x -> new String(x.response(), StandardCharsets.UTF_8)).orElse(null);
    }

    private static DISCARD[] split(EmbeddedCacheManager a, EmbeddedCacheManager b) throws Exception {
        DISCARD[] d = {new DISCARD(), new DISCARD()};
        CacheManagersTest.channel(a).getProtocolStack().insertProtocol(d[0], ProtocolStack.Position.ABOVE, TCP.class);
        CacheManagersTest.channel(b).getProtocolStack().insertProtocol(d[1], ProtocolStack.Position.ABOVE, TCP.class);
        d[0].addIgnoredMembers(CacheManagersTest.channel(b).getAddress());
        d[1].addIgnoredMembers(CacheManagersTest.channel(a).getAddress());
        awaitMembers(a, b, 1);
        return d;
    }

    private static void heal(EmbeddedCacheManager a, EmbeddedCacheManager b, DISCARD[] d) throws InterruptedException {
        d[0].resetIgnoredMembers();
        d[1].resetIgnoredMembers();
        awaitMembers(a, b, 2);
    }

    private static void awaitMembers(EmbeddedCacheManager a, EmbeddedCacheManager b, int size) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (a.getMembers().size() != size || b.getMembers().size() != size) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /**
     * A split cluster whose two sides wrote differently merges to copies that cannot be a wrong answer, on both nodes: a
     * record deleted on one side stays deleted (its tombstone wins), a record only one side wrote is dropped (the store
     * answers it next), a running marker is dropped, and a record both sides hold alike stays. The split is made by
     * JGroups' own {@code DISCARD}, as Infinispan's partition tests make theirs.
     */
    @Test
    void aSplitClusterMergesToNoWrongAnswerOnEitherNode() throws Exception {
        EmbeddedCacheManager[] pair = CacheManagersTest.twoNodes("merge-test-0", 7878);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        try {
            java.time.Clock clock = java.time.Clock.systemUTC();
            CacheKeys keys = CacheKeys.unprotected("merge-test");
            InfinispanRecordCache onA = new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            ScopedKey deleted = new ScopedKey("payments", "alice", "deleted-on-b");
            ScopedKey oneSide = new ScopedKey("payments", "alice", "written-on-a");
            ScopedKey marked = new ScopedKey("payments", "alice", "marked-on-a");
            ScopedKey kept = new ScopedKey("payments", "alice", "the-same-on-both");
            java.time.Instant before = clock.instant().minusSeconds(5);
            onA.put(CacheManagersTest.finishedAt(deleted, before, "deleted"));
            onA.put(CacheManagersTest.finishedAt(kept, before, "kept"));
            assertThat(onB.get(deleted)).as("replicated before the split").isPresent();

            DISCARD[] discards = split(a, b);

            onB.evict(deleted); // deleted on B's side only
            onA.put(CacheManagersTest.finishedAt(oneSide, clock.instant(), "one side")); // written on A's side only
            assertThat(onA.mark(marked, "node-a/1", java.time.Duration.ofMinutes(5))).isTrue(); // A's call still runs
            assertThat(onA.get(deleted)).as("A's side still holds what B deleted").isPresent();

            heal(a, b, discards);
            // Conflict resolution runs after the merged view, on Infinispan's own threads: its result is polled for.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((onA.get(deleted).isPresent() || onA.get(oneSide).isPresent() || onB.get(oneSide).isPresent())
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            for (InfinispanRecordCache on : List.of(onA, onB)) {
                assertThat(on.get(deleted)).as("a record deleted on one side stays deleted").isEmpty();
                assertThat(on.get(oneSide)).as("a record only one side wrote is dropped").isEmpty();
                assertThat(on.get(kept)).as("a record both sides hold alike stays")
                        .map(r -> new String(r.response(), StandardCharsets.UTF_8)).contains("kept");
            }
            assertThat(onB.mark(marked, "node-b/1", java.time.Duration.ofMinutes(5)))
                    .as("a running marker is dropped: the store judges the claim").isTrue();
        } finally {
            b.stop();
            a.stop();
        }
    }

    /**
     * Each node deletes one key during the split and a new call answers it anew there; the other side keeps the old
     * answer. Readers spin on both nodes through the merge: neither ever reads the answer its side deleted (a merge that
     * wrote a copy of the other side's record, even one meant to expire at once, was read there for a millisecond).
     */
    @Test
    void aDroppedCopyIsNeverReadOnTheNodeThatReplacedIt() throws Exception {
        EmbeddedCacheManager[] pair = CacheManagersTest.twoNodes("merge-test-1", 7964);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        try {
            Clock clock = Clock.systemUTC();
            CacheKeys keys = CacheKeys.unprotected("merge-test");
            InfinispanRecordCache onA = new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            ScopedKey k1 = new ScopedKey("payments", "alice", "renewed-on-a");
            ScopedKey k2 = new ScopedKey("payments", "alice", "renewed-on-b");
            onA.put(CacheManagersTest.finishedAt(k1, clock.instant().minusSeconds(5), "old-1"));
            onA.put(CacheManagersTest.finishedAt(k2, clock.instant().minusSeconds(5), "old-2"));
            assertThat(answer(onB.get(k2))).isEqualTo("old-2");

            DISCARD[] d = split(a, b);
            onA.evict(k1); // deleted on A, claimed anew, answered anew
            onA.put(CacheManagersTest.finishedAt(k1, clock.instant().plusSeconds(1), "new-1"));
            onB.evict(k2);
            onB.put(CacheManagersTest.finishedAt(k2, clock.instant().plusSeconds(1), "new-2"));
            assertThat(answer(onA.get(k1))).isEqualTo("new-1");
            assertThat(answer(onB.get(k2))).isEqualTo("new-2");
            assertThat(answer(onA.get(k2))).isEqualTo("old-2");

            Thread readerA = new Thread(() -> spin(onA, k1, "old-1", "A", stop, wrong));
            Thread readerB = new Thread(() -> spin(onB, k2, "old-2", "B", stop, wrong));
            readerA.start();
            readerB.start();
            heal(a, b, d);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((onA.holds(k1) || onA.holds(k2) || onB.holds(k1) || onB.holds(k2)) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200); // the readers read on for a while after the merge settled: a measurement window, not a wait
            stop.set(true);
            readerA.join();
            readerB.join();
            assertThat(wrong).as("a node answered the record it had deleted").isEmpty();
        } finally {
            stop.set(true);
            b.stop();
            a.stop();
        }
    }

    private static void spin(InfinispanRecordCache on, ScopedKey key, String deleted, String node, AtomicBoolean stop,
                             ConcurrentLinkedQueue<String> wrong) {
        long reads = 0;
        while (!stop.get()) {
            String got = answer(on.get(key));
            reads++;
            if (deleted.equals(got)) {
                wrong.add(node + " read " + got + " after " + reads + " reads");
                return;
            }
            if ((reads & 1023) == 0) {
                Thread.yield();
            }
        }
    }

    /**
     * Both sides delete the same key, one a second after the other. A late completion that finished between the two
     * deletions (the record the later deletion removed from the store) is kept out after the merge, as the later
     * deletion's tombstone kept it out on its side.
     */
    @Test
    void theMergeKeepsTheNewestTombstone() throws Exception {
        EmbeddedCacheManager[] pair = CacheManagersTest.twoNodes("merge-test-2", 7966);
        EmbeddedCacheManager a = pair[0];
        EmbeddedCacheManager b = pair[1];
        try {
            // An hour ahead of this machine's clock, as the store's clock may be: the merge's own "now" is then older
            // than both deletions, and only the newest tombstone's time keeps the late completion out.
            dev.idempotency.testing.FakeClock clock = new dev.idempotency.testing.FakeClock(java.time.Instant.now().plusSeconds(3600));
            CacheKeys keys = CacheKeys.unprotected("merge-test");
            InfinispanRecordCache onA = new InfinispanRecordCache(CacheManagers.defineCache(a, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            InfinispanRecordCache onB = new InfinispanRecordCache(CacheManagers.defineCache(b, 100), clock,
                    new dev.idempotency.core.LocalCompletionSignals(), keys);
            ScopedKey k3 = new ScopedKey("payments", "alice", "a-first");
            ScopedKey k4 = new ScopedKey("payments", "alice", "b-first");

            DISCARD[] d = split(a, b);
            java.time.Instant first = clock.instant();
            onA.evict(k3);
            onB.evict(k4);
            clock.advance(java.time.Duration.ofMillis(1500));
            onB.evict(k3);
            onA.evict(k4);
            heal(a, b, d);
            var ca = onA.cache();
            var cb = onB.cache();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((!Arrays.equals(ca.get(k3.cacheId()), cb.get(k3.cacheId()))
                    || !Arrays.equals(ca.get(k4.cacheId()), cb.get(k4.cacheId()))) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            // The record a call finished 700 ms after the first deletions, deleted by the second ones; its write, late.
            for (ScopedKey k : new ScopedKey[] {k3, k4}) {
                IdempotencyRecord deleted = CacheManagersTest.finishedAt(k, first.plusMillis(700), "deleted");
                onA.put(deleted);
                onB.put(deleted);
            }
            for (ScopedKey k : new ScopedKey[] {k3, k4}) {
                assertThat(answer(onA.get(k))).as(k + " on A").isNull();
                assertThat(answer(onB.get(k))).as(k + " on B").isNull();
            }
        } finally {
            b.stop();
            a.stop();
        }
    }
}
