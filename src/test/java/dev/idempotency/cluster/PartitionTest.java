package dev.idempotency.cluster;

import dev.idempotency.ClaimMode;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.ClusterRecordCache;
import dev.idempotency.cache.ClusterTuning;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;
import dev.idempotency.testing.TextCall;

import org.infinispan.factories.GlobalComponentRegistry;
import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.remoting.transport.Transport;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.protocols.DISCARD;
import org.jgroups.protocols.TCP;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster cut apart costs the cache, never the answers. Two or three engines in this JVM, each with the library's
 * clustered cache as it builds it (its own cache manager, the built-in JGroups stack on loopback, its default timeouts
 * and failure detection), all on the local PostgreSQL; JGroups' own {@code DISCARD} protocol, inserted above the
 * transport, drops every message between the two sides, as Infinispan's partition tests do. On every node one thread
 * per claim mode sends first requests, each retried at once on another node. The cluster is cut twice: for less than
 * failure detection (the views stay whole: the cache's calls time out and it is bypassed), then for longer (the views
 * split and each side goes on with a cache of its own), each time healed. Checked:
 *
 * <ul>
 * <li>every node's first requests, in each mode, are answered during each cut at least at half their rate before it,
 *     none in more than 2 s;</li>
 * <li>after each heal the views are whole again within 15 s;</li>
 * <li>one business row per key, and every retry, during the run and after the last merge on every node, is the first
 *     answer, replayed.</li>
 * </ul>
 *
 * The figures (rates, slowest, detection and merge times) are printed for the clustering page.
 */
class PartitionTest {

    private static final ClaimMode[] MODES = {ClaimMode.ATOMIC, ClaimMode.OPTIMISTIC, ClaimMode.LEASED};
    private static final Duration SHORT_CUT = Duration.ofSeconds(3);
    private static final Duration LONG_CUT = Duration.ofSeconds(11);
    private static final Duration BEFORE = Duration.ofSeconds(3);
    private static final long SLOWEST_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final Duration MERGE_BOUND = Duration.ofSeconds(15);
    private static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);

    private JtaEnvironment env;
    private final List<Node> nodes = new ArrayList<>();
    private ExecutorService load;

    /** One engine: its cache manager, the cache as the library guards it, and the DISCARD that cuts it off. */
    private static final class Node {
        final String name;
        final EmbeddedCacheManager manager;
        final ClusterRecordCache cache;
        final IdempotencyEngine engine;
        final JChannel channel;
        final DISCARD discard = new DISCARD();

        Node(String name, EmbeddedCacheManager manager, ClusterRecordCache cache, IdempotencyEngine engine) throws Exception {
            this.name = name;
            this.manager = manager;
            this.cache = cache;
            this.engine = engine;
            this.channel = ((JGroupsTransport) GlobalComponentRegistry.componentOf(manager, Transport.class)).getChannel();
            channel.getProtocolStack().insertProtocol(discard, ProtocolStack.Position.ABOVE, TCP.class);
        }

        int members() {
            return manager.getMembers() == null ? 1 : manager.getMembers().size();
        }
    }

    /** A first request or its retry, as it was answered. */
    private record Call(int node, ClaimMode mode, String key, boolean first, long startedNanos, long tookNanos, String answer, boolean ran) {
        long endedNanos() {
            return startedNanos + tookNanos;
        }
    }

    @BeforeEach
    void database() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS partition_effect");
            s.execute("CREATE TABLE partition_effect (idem_key VARCHAR(200) NOT NULL, node VARCHAR(100) NOT NULL)");
        }
        env = new JtaEnvironment(TestDatabase.POSTGRES);
    }

    @AfterEach
    void stop() {
        if (load != null) {
            load.shutdownNow();
        }
        for (Node n : nodes) {
            n.cache.close();
            n.manager.stop();
        }
        if (env != null) {
            env.close();
        }
    }

    @ParameterizedTest(name = "{0} engines")
    @ValueSource(ints = {2, 3})
    void aPartitionCostsTheCacheNeverTheAnswers(int size) throws Exception {
        start(size);
        ConcurrentLinkedQueue<Call> answered = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        load = Executors.newFixedThreadPool(size * MODES.length);
        CountDownLatch stopped = new CountDownLatch(size * MODES.length);
        String run = UUID.randomUUID().toString().substring(0, 8);
        for (int n = 0; n < size; n++) {
            for (ClaimMode mode : MODES) {
                int node = n;
                load.execute(() -> {
                    try {
                        for (int i = 0; running.get(); i++) {
                            String key = run + "-" + mode + "-" + node + "-" + i;
                            Call first = call(node, mode, key, true);
                            answered.add(first);
                            int other = (node + 1 + i % (size - 1)) % size;
                            Call retry = call(other, mode, key, false);
                            answered.add(retry);
                            if (!first.ran() || retry.ran() || !retry.answer().equals(first.answer())) {
                                wrong.add(key + ": first " + first + ", retry " + retry);
                            }
                        }
                    } catch (Exception e) {
                        wrong.add(mode + " on node " + node + ": " + e);
                    } finally {
                        stopped.countDown();
                    }
                });
            }
        }
        sleepThrough(Duration.ofSeconds(1)); // the load warms up
        long t0 = System.nanoTime();
        sleepThrough(BEFORE); // the load runs: the rate before the cuts
        List<Node> minority = List.of(nodes.get(0));
        List<Node> majority = nodes.subList(1, size);

        long shortCut = System.nanoTime();
        cut(minority, majority);
        sleepThrough(SHORT_CUT);
        boolean splitInShortCut = nodes.stream().anyMatch(x -> x.members() < size);
        heal();
        long shortHealed = System.nanoTime();
        Duration shortMerge = awaitWhole(size);

        sleepThrough(BEFORE);
        long longCut = System.nanoTime();
        cut(minority, majority);
        Duration detected = awaitSplit(size, LONG_CUT);
        long longCutEnds = longCut + LONG_CUT.toNanos();
        sleepThrough(Duration.ofNanos(Math.max(0, longCutEnds - System.nanoTime())));
        heal();
        long longHealed = System.nanoTime();
        Duration longMerge = awaitWhole(size);
        sleepThrough(BEFORE);
        running.set(false);
        assertThat(stopped.await(60, TimeUnit.SECONDS)).as("every load thread ended").isTrue();
        for (Node n : nodes) {
            assertThat(n.cache.awaitWrites(Duration.ofSeconds(30))).as("%s's cache writes done", n.name).isTrue();
        }
        List<Call> calls = List.copyOf(answered);

        // The figures, for the clustering page.
        StringBuilder figures = new StringBuilder("A partition of " + size + " engines (PostgreSQL, the library's cluster defaults): "
                + "the short cut " + SHORT_CUT.toSeconds() + " s (views split: " + splitInShortCut + "), whole again "
                + shortMerge.toMillis() + " ms after the heal; the long cut " + LONG_CUT.toSeconds() + " s, views split "
                + detected.toMillis() + " ms into it, whole again " + longMerge.toMillis() + " ms after the heal\n");
        for (int n = 0; n < size; n++) {
            for (ClaimMode mode : MODES) {
                double before = rate(calls, n, mode, t0, shortCut);
                double inShort = rate(calls, n, mode, shortCut, shortHealed);
                double inLong = rate(calls, n, mode, longCut, longHealed);
                long slowest = slowest(calls, n, mode, shortCut, shortHealed + TimeUnit.SECONDS.toNanos(1));
                long slowestLong = slowest(calls, n, mode, longCut, longHealed + TimeUnit.SECONDS.toNanos(1));
                figures.append(String.format("  node %d %-10s first requests/s before %6.1f, short cut %6.1f, long cut %6.1f;"
                                + " slowest call in the short cut %5d ms, in the long cut %5d ms%n", n, mode, before, inShort, inLong,
                        TimeUnit.NANOSECONDS.toMillis(slowest), TimeUnit.NANOSECONDS.toMillis(slowestLong)));
            }
        }
        long slowestAll = calls.stream().mapToLong(Call::tookNanos).max().orElse(0);
        figures.append("  slowest call of the run: ").append(TimeUnit.NANOSECONDS.toMillis(slowestAll)).append(" ms; ")
                .append(calls.size()).append(" calls");
        System.out.println(figures);

        assertThat(wrong).as("first requests that did not run, retries that ran or answered otherwise").isEmpty();
        assertThat(splitInShortCut).as("the short cut is shorter than failure detection: the views stay whole").isFalse();
        assertThat(detected).as("the long cut is longer than failure detection: the views split").isLessThan(LONG_CUT);
        assertThat(shortMerge).as("whole again after the short cut").isLessThan(MERGE_BOUND);
        assertThat(longMerge).as("merged after the long cut").isLessThan(MERGE_BOUND);
        for (int n = 0; n < size; n++) {
            for (ClaimMode mode : MODES) {
                double before = rate(calls, n, mode, t0, shortCut);
                assertThat(before).as("node %d %s answers before the cuts", n, mode).isPositive();
                assertThat(rate(calls, n, mode, shortCut, shortHealed)).as("node %d %s during the short cut (%s)", n, mode, figures)
                        .isGreaterThanOrEqualTo(before / 2);
                assertThat(rate(calls, n, mode, longCut, longHealed)).as("node %d %s during the long cut (%s)", n, mode, figures)
                        .isGreaterThanOrEqualTo(before / 2);
            }
        }
        assertThat(slowestAll).as("no call slower than 2 s (%s)", figures).isLessThanOrEqualTo(SLOWEST_NANOS);

        // One business row per key; after the last merge, every key's retry on every node is its first answer.
        Map<String, String> firstAnswers = calls.stream().filter(Call::first).collect(Collectors.toMap(Call::key, Call::answer));
        assertThat(rowsPerKey(run)).as("one business row per key").containsOnlyKeys(firstAnswers.keySet())
                .allSatisfy((k, rows) -> assertThat(rows).as(k).isEqualTo(1));
        List<java.util.concurrent.Future<String>> retries = new ArrayList<>();
        for (Map.Entry<String, String> e : firstAnswers.entrySet()) {
            ClaimMode mode = ClaimMode.valueOf(e.getKey().split("-")[1]);
            for (int n = 0; n < size; n++) {
                int node = n;
                retries.add(load.submit(() -> {
                    Call again = call(node, mode, e.getKey(), false);
                    return again.ran() || !again.answer().equals(e.getValue()) ? e.getKey() + " on node " + node + ": " + again : null;
                }));
            }
        }
        for (java.util.concurrent.Future<String> r : retries) {
            assertThat(r.get(60, TimeUnit.SECONDS)).as("a retry after the merge is the first answer, replayed").isNull();
        }
    }

    private void start(int size) throws Exception {
        String hosts = java.util.stream.IntStream.range(0, size).mapToObj(i -> "127.0.0.1[" + (7951 + i) + "]")
                .collect(Collectors.joining(","));
        CacheKeys keys = CacheKeys.unprotected("idempotency-partition-test");
        for (int i = 0; i < size; i++) {
            String name = "node-" + i;
            EmbeddedCacheManager manager = CacheManagers.start(true, "idempotency-partition-test", name, null, "127.0.0.1",
                    7951 + i, hosts, 100_000, keys, false, 0, ClusterTuning.DEFAULT);
            LocalCompletionSignals signals = new LocalCompletionSignals();
            ClusterRecordCache cache = ClusterRecordCache.start(new InfinispanRecordCache(
                    CacheManagers.defineCache(manager, 100_000, 0, ClusterTuning.DEFAULT), Clock.systemUTC(), signals, keys), ClusterTuning.DEFAULT);
            IdempotencyEngine engine = new IdempotencyEngine(env.store, Clock.systemUTC(), name, env.bridge(), signals,
                    Executors.newCachedThreadPool(), Duration.ofSeconds(30), cache);
            nodes.add(new Node(name, manager, cache, engine));
        }
        Duration whole = awaitWhole(size);
        assertThat(whole).as("the cluster formed").isLessThan(Duration.ofSeconds(30));
    }

    /** A call of the key on a node: the work writes its business row and answers which node ran it. */
    private Call call(int node, ClaimMode mode, String key, boolean first) throws Exception {
        Node n = nodes.get(node);
        AtomicInteger ran = new AtomicInteger();
        long started = System.nanoTime();
        AtomicOutcome<String> outcome = n.engine.flow(mode).run(new ScopedKey("partition", "anonymous", key), "fp", null, POLICY,
                TextCall.of(() -> {
                    ran.incrementAndGet();
                    try (Connection c = env.dataSource.getConnection();
                         PreparedStatement ps = c.prepareStatement("insert into partition_effect (idem_key, node) values (?, ?)")) {
                        ps.setString(1, key);
                        ps.setString(2, n.name);
                        ps.executeUpdate();
                    }
                    return key + " by " + n.name;
                }));
        long took = System.nanoTime() - started;
        String answer = outcome instanceof AtomicOutcome.Ran<String> r ? r.value()
                : new String(((AtomicOutcome.Replayed<String>) outcome).record().response(), StandardCharsets.UTF_8);
        return new Call(node, mode, key, first, started, took, answer, ran.get() > 0);
    }

    /** Every message between the two sides dropped, both ways. */
    private static void cut(List<Node> one, List<Node> other) {
        Address[] oneSide = one.stream().map(n -> n.channel.getAddress()).toArray(Address[]::new);
        Address[] otherSide = other.stream().map(n -> n.channel.getAddress()).toArray(Address[]::new);
        one.forEach(n -> n.discard.addIgnoredMembers(otherSide));
        other.forEach(n -> n.discard.addIgnoredMembers(oneSide));
    }

    private void heal() {
        nodes.forEach(n -> n.discard.resetIgnoredMembers());
    }

    /** How long until every node's view holds every node (polled every 50 ms, up to a minute). */
    private Duration awaitWhole(int size) {
        long started = System.nanoTime();
        long deadline = started + TimeUnit.MINUTES.toNanos(1);
        while (nodes.stream().anyMatch(n -> n.members() < size) && System.nanoTime() < deadline) {
            pause();
        }
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** How long until some node's view lost a member; {@code atMost} when none did by then. */
    private Duration awaitSplit(int size, Duration atMost) {
        long started = System.nanoTime();
        while (nodes.stream().allMatch(n -> n.members() == size) && System.nanoTime() - started < atMost.toNanos()) {
            pause();
        }
        return Duration.ofNanos(Math.min(System.nanoTime() - started, atMost.toNanos()));
    }

    private static void pause() {
        try {
            Thread.sleep(50); // polling views that JGroups installs on its own threads
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Lets the load run for a while: the phases of the run are measured in time, not synchronised on. */
    private static void sleepThrough(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    /** First requests of a node and mode answered per second in [from, to). */
    private static double rate(List<Call> calls, int node, ClaimMode mode, long from, long to) {
        long answered = calls.stream().filter(c -> c.first() && c.node() == node && c.mode() == mode
                && c.endedNanos() >= from && c.endedNanos() < to).count();
        return answered / ((to - from) / 1e9);
    }

    /** The slowest call on a node in that mode (first requests and retries) that ended in [from, to). */
    private static long slowest(List<Call> calls, int node, ClaimMode mode, long from, long to) {
        return calls.stream().filter(c -> c.node() == node && c.mode() == mode && c.endedNanos() >= from && c.endedNanos() < to)
                .mapToLong(Call::tookNanos).max().orElse(0);
    }

    private static Map<String, Integer> rowsPerKey(String run) throws Exception {
        Map<String, Integer> rows = new ConcurrentHashMap<>();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select idem_key, count(*) from partition_effect where idem_key like '" + run + "-%' group by idem_key")) {
            while (r.next()) {
                rows.put(r.getString(1), r.getInt(2));
            }
        }
        return rows;
    }
}
