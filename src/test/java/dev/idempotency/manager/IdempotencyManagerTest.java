package dev.idempotency.manager;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyManager;
import dev.idempotency.IdempotencyRequestTypeException;
import dev.idempotency.IdempotencyResponseNotFoundException;
import dev.idempotency.IdempotencyTransferException;
import dev.idempotency.RequestKey;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.events.ResponseStored;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.ForIdempotency;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ManagementPolicy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.TestDatabase;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;

import org.h2.jdbcx.JdbcDataSource;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * The programmatic API, a test per behaviour, on the JPA store (H2) with the cache in front; the same on two nodes (two
 * containers, each with its own cache manager, in one JGroups cluster on loopback, sharing the database).
 */
class IdempotencyManagerTest {

    static final FakeClock CLOCK = new FakeClock();
    static final AtomicLong STATEMENTS = new AtomicLong();
    static final List<ResponseStored> EVENTS = new CopyOnWriteArrayList<>();

    /** H2, counting the SQL statements prepared (the "no SQL" checks). */
    @ApplicationScoped
    public static class Database {
        @Produces
        @ForIdempotency
        DataSource dataSource() {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL(TestDatabase.H2.url);
            h2.setUser(TestDatabase.H2.user);
            return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                    (proxy, method, args) -> {
                        Object result = method.invoke(h2, args);
                        if (result instanceof Connection c) {
                            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                                    (p2, m2, a2) -> {
                                        if (m2.getName().startsWith("prepare") || m2.getName().equals("createStatement")) {
                                            STATEMENTS.incrementAndGet();
                                        }
                                        try {
                                            return m2.invoke(c, a2);
                                        } catch (java.lang.reflect.InvocationTargetException e) {
                                            throw e.getCause();
                                        }
                                    });
                        }
                        return result;
                    });
        }

        @Produces
        @ForIdempotency
        Clock clock() {
            return CLOCK;
        }

        void stored(@Observes ResponseStored e) {
            EVENTS.add(e);
        }
    }

    final List<WeldContainer> containers = new ArrayList<>();

    IdempotencyManager node(String id, Map<String, String> extra, Class<?>... beans) {
        Map<String, String> config = new HashMap<>(extra);
        List<Class<?>> classes = new ArrayList<>(List.of(beans));
        classes.add(Database.class);
        WeldContainer c = IdempotencyWeld.weld(config, classes.toArray(Class<?>[]::new)).containerId(id).initialize();
        containers.add(c);
        return c.select(IdempotencyManager.class).get();
    }

    IdempotencyManager node() {
        return node("node", Map.of());
    }

    @BeforeEach
    void reset() {
        TestDatabase.H2.reset();
        EVENTS.clear();
    }

    @AfterEach
    void stop() {
        containers.forEach(WeldContainer::close);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void m1CheckSeesRecordsAndIsAnsweredWithoutSqlOnceKnown() {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("req-1");
        IdempotencyManager.Check first = m.check(k);
        assertThat(first.seen()).isFalse();
        assertThat(first.sinceLastSeen()).isEmpty();
        CLOCK.advance(Duration.ofSeconds(7));
        long before = STATEMENTS.get();
        IdempotencyManager.Check second = m.check(k);
        // A known id is checked in the cache; with no response known to it, the store is asked whether another node
        // stored one: one read by primary key.
        assertThat(STATEMENTS.get() - before).as("a known id is checked in the cache, the response in the store").isEqualTo(1);
        assertThat(second.seen()).isTrue();
        assertThat(second.sinceLastSeen()).contains(Duration.ofSeconds(7));
        assertThat(second.responseStored()).isFalse();
        CLOCK.advance(Duration.ofSeconds(3));
        assertThat(m.check(k).sinceLastSeen()).as("it recorded 'seen now'").contains(Duration.ofSeconds(3));
        m.store(k, "the answer");
        before = STATEMENTS.get();
        assertThat(m.check(k).responseStored()).isTrue();
        assertThat(STATEMENTS.get()).as("a known id with its response is answered by the cache").isEqualTo(before);
    }

    /** Another node stored the response: a node whose own cache saw the id before, but not the response, asks the store. */
    @Test
    void aResponseStoredOnAnotherNodeIsSeenThoughThisNodesCacheKnowsTheId() {
        IdempotencyManager a = node("node-a", Map.of());
        IdempotencyManager b = node("node-b", Map.of());
        RequestKey k = RequestKey.of("req-other-node");
        assertThat(b.check(k).responseStored()).isFalse(); // b's own cache now knows the id, with no response
        a.store(k, "the answer");
        assertThat(b.check(k).responseStored()).as("stored on the other node").isTrue();
    }

    @Test
    void m1LastSeenIsStoredStateThatOutlivesTheCache() {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("req-stored");
        m.check(k);
        CLOCK.advance(Duration.ofSeconds(7));
        Instant sighted = CLOCK.instant();
        assertThat(m.check(k).sinceLastSeen()).contains(Duration.ofSeconds(7)); // from the cache
        CLOCK.advance(Duration.ofSeconds(3));
        m.flushCache(); // the store learns the cache's sightings first
        assertThat(records()).filteredOn(r -> r.scopedKey().key().equals("req-stored")).singleElement()
                .satisfies(r -> assertThat(r.lastSeen()).as("the store holds the last sighting").isEqualTo(sighted));
        long before = STATEMENTS.get();
        IdempotencyManager.Check afterFlush = m.check(k);
        assertThat(STATEMENTS.get()).as("the store answers once the cache forgot the id").isGreaterThan(before);
        assertThat(afterFlush.seen()).isTrue();
        assertThat(afterFlush.sinceLastSeen()).as("last seen, from the store").contains(Duration.ofSeconds(3));

        var counts = containers.get(0).select(dev.idempotency.metrics.IdempotencyMetrics.class).get()
                .snapshot(IdempotencyManagerBean.SEEN);
        assertThat(counts.count(dev.idempotency.metrics.IdempotencyMetrics.Counter.EXECUTED)).as("first sightings").isEqualTo(1);
        assertThat(counts.count(dev.idempotency.metrics.IdempotencyMetrics.Counter.REPLAYED)).as("later sightings").isEqualTo(2);
    }

    @Test
    void m1WithoutACacheEveryNodeReadsTheSameLastSeen() {
        IdempotencyManager node1 = node("node-1", Map.of("idempotency.cache.mode", "none", "idempotency.node-id", "node-1"));
        IdempotencyManager node2 = node("node-2", Map.of("idempotency.cache.mode", "none", "idempotency.node-id", "node-2"));
        RequestKey k = RequestKey.of("req-none");
        assertThat(node1.check(k).seen()).isFalse();
        CLOCK.advance(Duration.ofSeconds(2));
        IdempotencyManager.Check onTwo = node2.check(k);
        assertThat(onTwo.seen()).isTrue();
        assertThat(onTwo.sinceLastSeen()).contains(Duration.ofSeconds(2));
        CLOCK.advance(Duration.ofSeconds(3));
        assertThat(node1.check(k).sinceLastSeen()).as("node 2's sighting, which node 1 never saw").contains(Duration.ofSeconds(3));
        node2.store(k, "stored on 2");
        assertThat(node1.check(k).responseStored()).isTrue();
    }

    @Test
    void m5ListenersNeedNoCache() {
        IdempotencyManager m = node("node", Map.of("idempotency.cache.mode", "none"));
        RequestKey k = RequestKey.of("listened-without-cache");
        List<String> heard = new CopyOnWriteArrayList<>();
        m.addListener(k, (key, response) -> heard.add(new String(response, StandardCharsets.UTF_8)));
        m.store(k, "r");
        m.store(k, "r");
        assertThat(heard).containsExactly("r");
    }

    @Test
    void m2M3StoreAndRetrieveUsePrimaryAndSecondaryIds() {
        IdempotencyManager m = node();
        RequestKey checkout = RequestKey.of("cart-9");
        m.store(checkout.withSecondaryId("reserve"), "reserved");
        m.store(checkout.withSecondaryId("charge"), "charged");
        assertThat(new String(m.retrieve(checkout.withSecondaryId("reserve")), StandardCharsets.UTF_8)).isEqualTo("reserved");
        assertThat(new String(m.retrieve(checkout.withSecondaryId("charge")), StandardCharsets.UTF_8)).isEqualTo("charged");
        assertThatThrownBy(() -> m.retrieve(checkout.withSecondaryId("ship"))).isInstanceOf(IdempotencyResponseNotFoundException.class);
        assertThatThrownBy(() -> m.retrieve(checkout)).isInstanceOf(IdempotencyResponseNotFoundException.class);
        m.store(checkout.withSecondaryId("charge"), "charged"); // the same again: nothing happens
        assertThatThrownBy(() -> m.store(checkout.withSecondaryId("charge"), "charged twice"))
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }

    @Test
    void anApplicationWritingIntoARetrievedResponseChangesNothingStored() {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("written-into").withSecondaryId("charge");
        m.store(k, "charged");
        byte[] mine = m.retrieve(k);
        java.util.Arrays.fill(mine, (byte) 'x');
        assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("charged");
        assertThat(new String(m.await(k, Duration.ofSeconds(1)).orElseThrow(), StandardCharsets.UTF_8)).isEqualTo("charged");
    }

    @Test
    void aFlushedCacheLosesNoResponseAndLearnsItAgain() {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("flushed").withSecondaryId("charge");
        m.store(k, "charged");
        long before = STATEMENTS.get();
        m.retrieve(k);
        assertThat(STATEMENTS.get()).as("answered from the cache").isEqualTo(before);
        m.flushCache();
        CLOCK.advance(Duration.ofSeconds(1)); // a read started in the flush's own instant may predate it: not cached
        assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("charged");
        assertThat(STATEMENTS.get()).as("the store answered").isGreaterThan(before);
        long after = STATEMENTS.get();
        m.retrieve(k);
        assertThat(STATEMENTS.get()).as("and the cache learnt it again").isEqualTo(after);
        assertThatThrownBy(() -> m.store(k, "charged twice")).isInstanceOf(IdempotencyKeyReusedException.class);
    }

    /** The caller, as the server's security would give it to CDI's built-in {@code Principal} bean. */
    static final ThreadLocal<String> CALLER = new ThreadLocal<>();

    IdempotencyManager nodeWithCallers(String id, Map<String, String> extra) {
        Map<String, String> config = new HashMap<>(extra);
        WeldContainer c = IdempotencyWeld.weld(config, Database.class).containerId(id)
                .addServices(new org.jboss.weld.security.spi.SecurityServices() {
                    @Override
                    public java.security.Principal getPrincipal() {
                        String name = CALLER.get();
                        if ("!fails".equals(name)) {
                            throw new SecurityException("the security subsystem failed");
                        }
                        return name == null ? null : () -> name;
                    }

                    @Override
                    public void cleanup() {
                    }
                })
                .initialize();
        containers.add(c);
        return c.select(IdempotencyManager.class).get();
    }

    /** Keys per caller for the programmatic API too: one caller's ids never answer another's, unless scoping is switched off. */
    @Test
    void managerKeysAreScopedPerCallerLikeTheAnnotations() {
        IdempotencyManager m = nodeWithCallers("scoped", Map.of());
        RequestKey k = RequestKey.of("order-1").withSecondaryId("charge");
        try {
            CALLER.set("alice");
            m.store(k, "alice's receipt");
            assertThat(m.check(RequestKey.of("order-1")).seen()).isFalse();
            CALLER.set("bob");
            assertThatThrownBy(() -> m.retrieve(k)).isInstanceOf(IdempotencyResponseNotFoundException.class);
            assertThat(m.check(RequestKey.of("order-1")).seen()).as("bob's first sight of his own id").isFalse();
            m.store(k, "bob's receipt");
            assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("bob's receipt");
            CALLER.set("alice");
            assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("alice's receipt");
            assertThat(m.check(RequestKey.of("order-1")).seen()).isTrue();
        } finally {
            CALLER.remove();
        }
    }

    /**
     * The names servers give the unauthenticated caller through CDI's Principal (WildFly's anonymous, Payara's
     * ANONYMOUS, Open Liberty's UNAUTHENTICATED) are the anonymous scope, the one a request without a principal has;
     * a Principal that fails refuses the call rather than run it as anybody.
     */
    @Test
    void theServersUnauthenticatedNamesAreAnonymousAndAFailingPrincipalRefuses() {
        IdempotencyManager m = nodeWithCallers("unauthenticated", Map.of());
        RequestKey k = RequestKey.of("order-3");
        try {
            CALLER.set(null);
            m.store(k, "nobody's receipt");
            for (String name : new String[] {"anonymous", "ANONYMOUS", "UNAUTHENTICATED"}) {
                CALLER.set(name);
                assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).as(name).isEqualTo("nobody's receipt");
            }
            CALLER.set("alice");
            assertThatThrownBy(() -> m.retrieve(k)).isInstanceOf(IdempotencyResponseNotFoundException.class);
            CALLER.set("!fails");
            assertThatThrownBy(() -> m.store(RequestKey.of("order-4"), "charged"))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("Could not tell who calls");
            CALLER.set(null);
            assertThatThrownBy(() -> m.retrieve(RequestKey.of("order-4"))).as("nothing was stored")
                    .isInstanceOf(IdempotencyResponseNotFoundException.class);
        } finally {
            CALLER.remove();
        }
    }

    @Test
    void managerKeysAreSharedByEveryCallerWhenScopingIsOff() {
        IdempotencyManager m = nodeWithCallers("shared", Map.of("idempotency.manager.scope-by-principal", "false"));
        RequestKey k = RequestKey.of("order-2");
        try {
            CALLER.set("alice");
            m.store(k, "the receipt");
            CALLER.set("bob");
            assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("the receipt");
        } finally {
            CALLER.remove();
        }
    }

    /** The key syntax for the programmatic API too: the configured length, and a malformed id is counted like the doors'. */
    @Test
    void idsFollowTheConfiguredKeyRulesAndBadOnesAreCounted() {
        IdempotencyManager m = node("short-keys", Map.of("idempotency.max-key-length", "10"));
        var metrics = containers.get(0).select(dev.idempotency.metrics.IdempotencyMetrics.class).get();
        m.store(RequestKey.of("0123456789"), "ten characters");
        assertThatThrownBy(() -> m.store(RequestKey.of("0123456789a"), "eleven"))
                .isInstanceOf(dev.idempotency.IdempotencyKeyInvalidException.class).hasMessageContaining("at most 10");
        assertThatThrownBy(() -> m.check(RequestKey.of("tab\there")))
                .isInstanceOf(dev.idempotency.IdempotencyKeyInvalidException.class);
        assertThat(metrics.snapshot(IdempotencyManagerBean.RESPONSES).count(dev.idempotency.metrics.IdempotencyMetrics.Counter.KEYS_MALFORMED))
                .isEqualTo(2);
    }

    /** ResponseStored fires once per stored response: not per listener, not for a replayed store, not for a late listener. */
    @Test
    void responseStoredFiresOncePerStoredResponse() {
        IdempotencyManager m = node();
        RequestKey listened = RequestKey.of("twice-listened");
        m.addListener(listened, (key, response) -> { });
        m.addListener(listened, (key, response) -> { });
        m.store(listened, "r");
        m.store(listened, "r");
        m.addListener(listened, (key, response) -> { });
        m.store(RequestKey.of("unlistened"), "r");
        assertThat(EVENTS).extracting(ResponseStored::key).containsExactly("twice-listened", "unlistened");
    }

    /**
     * A store that is still running, or crashed before it completed, is "in progress" (then taken over by the next store,
     * whatever its bytes), never "another response", whether its bytes are the same or others: "another response" is one
     * that {@code retrieve} returns.
     */
    @Test
    void aStoreInProgressOrCrashedIsInProgressNotAnotherResponse() {
        IdempotencyManager m = node();
        IdempotencyRuntime runtime = containers.get(0).select(IdempotencyRuntime.class).get();
        IdempotencyEngine engine = runtime.engine();
        RequestKey k = RequestKey.of("crashed");
        RequestKey other = RequestKey.of("crashed-storing-other-bytes");
        RequestKey earlier = RequestKey.of("crashed-in-an-earlier-version");
        Instant now = engine.clock().instant();
        // A node claimed the responses' keys and died before it completed (the last as an earlier version claimed them:
        // by the bytes' fingerprint).
        for (RequestKey claimed : java.util.List.of(k, other, earlier)) {
            String fingerprint = claimed == earlier ? dev.idempotency.core.Fingerprint.sha256Hex(bytes("r")) : IdempotencyManagerBean.STORE_CLAIM;
            assertThat(engine.store().claim(new ClaimRequest(new ScopedKey(IdempotencyManagerBean.RESPONSES, "anonymous", claimed.primaryId()),
                    fingerprint, null, "dead-node", now, now.plus(Duration.ofMinutes(1)),
                    now.plus(Duration.ofHours(1))))).isInstanceOf(Claim.Acquired.class);
        }
        assertThatThrownBy(() -> m.store(earlier, "s")).isInstanceOf(dev.idempotency.IdempotencyInProgressException.class);
        assertThatThrownBy(() -> m.store(k, "r")).isInstanceOf(dev.idempotency.IdempotencyInProgressException.class);
        assertThatThrownBy(() -> m.store(other, "s")).isInstanceOf(dev.idempotency.IdempotencyInProgressException.class);
        assertThatThrownBy(() -> m.retrieve(other)).isInstanceOf(dev.idempotency.IdempotencyResponseNotFoundException.class);
        CLOCK.advance(Duration.ofMinutes(2)); // its lease is over: taken over
        m.store(k, "r");
        assertThat(new String(m.retrieve(k), StandardCharsets.UTF_8)).isEqualTo("r");
        m.store(other, "s");
        assertThatThrownBy(() -> m.store(other, "r")).isInstanceOf(dev.idempotency.IdempotencyKeyReusedException.class);
        assertThat(new String(m.retrieve(other), StandardCharsets.UTF_8)).isEqualTo("s");
        m.store(earlier, "s"); // an earlier version's dead claim, taken over too
        assertThat(new String(m.retrieve(earlier), StandardCharsets.UTF_8)).isEqualTo("s");
        m.store(earlier, "s");
        assertThatThrownBy(() -> m.store(earlier, "r")).isInstanceOf(dev.idempotency.IdempotencyKeyReusedException.class);
    }

    /** A response is kept per primary and secondary id: one stored under another secondary id is not this one's. */
    @Test
    void aResponseOfAnotherSecondaryIdIsNotStoredForThisOne() {
        IdempotencyManager m = node();
        RequestKey charge = RequestKey.of("order-7").withSecondaryId("charge");
        RequestKey refund = RequestKey.of("order-7").withSecondaryId("refund");
        assertThat(m.check(charge).responseStored()).isFalse();
        m.store(charge, "charged");
        assertThat(m.check(charge).responseStored()).isTrue();
        assertThat(m.check(refund).seen()).as("the primary id").isTrue();
        assertThat(m.check(refund).responseStored()).as("nothing stored for the refund").isFalse();
        assertThatThrownBy(() -> m.store(charge, (byte[]) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void m3PrimaryAndSecondaryIdsNeverCollide() {
        IdempotencyManager m = node();
        m.store(RequestKey.of("a b").withSecondaryId("c"), "one");
        m.store(RequestKey.of("a").withSecondaryId("b c"), "two");
        // A primary id spelled like another key's combined form, and a combined id long enough to be digested.
        m.store(RequestKey.of("3:a b c"), "three");
        m.store(RequestKey.of("a b c"), "four");
        String longPrimary = "p".repeat(200);
        m.store(RequestKey.of(longPrimary).withSecondaryId("s".repeat(100)), "five");
        assertThat(new String(m.retrieve(RequestKey.of("a b").withSecondaryId("c")), StandardCharsets.UTF_8)).isEqualTo("one");
        assertThat(new String(m.retrieve(RequestKey.of("a").withSecondaryId("b c")), StandardCharsets.UTF_8)).isEqualTo("two");
        assertThat(new String(m.retrieve(RequestKey.of("3:a b c")), StandardCharsets.UTF_8)).isEqualTo("three");
        assertThat(new String(m.retrieve(RequestKey.of("a b c")), StandardCharsets.UTF_8)).isEqualTo("four");
        assertThat(new String(m.retrieve(RequestKey.of(longPrimary).withSecondaryId("s".repeat(100))), StandardCharsets.UTF_8))
                .isEqualTo("five");
        assertThatThrownBy(() -> m.retrieve(RequestKey.of(longPrimary))).isInstanceOf(IdempotencyResponseNotFoundException.class);
    }

    @Test
    void m4AwaitReturnsTheResponseOnceStoredOrEmptyAtTheTimeout() throws Exception {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("slow-1");
        CompletableFuture<Optional<byte[]>> waiter = CompletableFuture.supplyAsync(() -> m.await(k, Duration.ofSeconds(120)));
        awaitWaiter(containers.get(0));
        m.store(k, "done");
        // Woken by the store, long before its 120 s timeout (a waiter that missed the wake-up reads again only then).
        assertThat(waiter.get(30, TimeUnit.SECONDS)).hasValueSatisfying(b -> assertThat(b).isEqualTo(bytes("done")));
        assertThat(m.await(RequestKey.of("never"), Duration.ofMillis(50))).isEmpty();
    }

    @Test
    void m5AListenerIsCalledOnceAndACdiEventFires() {
        IdempotencyManager m = node();
        RequestKey k = RequestKey.of("listened");
        AtomicInteger calls = new AtomicInteger();
        m.addListener(k, (key, response) -> calls.incrementAndGet());
        m.store(k, "r");
        m.store(k, "r");
        assertThat(calls).hasValue(1);
        assertThat(EVENTS).extracting(ResponseStored::key).containsExactly("listened");
        AtomicInteger late = new AtomicInteger();
        m.addListener(k, (key, response) -> late.incrementAndGet());
        assertThat(late).as("registered after the store: called at once").hasValue(1);
    }

    @Test
    void m6RequestTypes() {
        IdempotencyManager m = node("types", Map.of("idempotency.request-types.enabled", "payment",
                "idempotency.request-types.disabled", "telemetry", "idempotency.request-types.default", "error"));
        RequestKey payment = RequestKey.of("p-1").withType("payment");
        m.check(payment);
        assertThat(m.check(payment).seen()).isTrue();
        RequestKey telemetry = RequestKey.of("t-1").withType("telemetry");
        m.check(telemetry);
        assertThat(m.check(telemetry).seen()).as("a disabled type is never redundant").isFalse();
        assertThatThrownBy(() -> m.check(RequestKey.of("x").withType("unknown"))).isInstanceOf(IdempotencyRequestTypeException.class);
        assertThat(m.check(RequestKey.of("untyped")).seen()).isFalse();
    }

    @Test
    void m7ExportClearImportGivesBackEqualRecords(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        m.check(RequestKey.of("a"));
        m.store(RequestKey.of("a").withSecondaryId("1"), "one");
        m.store(RequestKey.of("b"), bytes("two"));
        List<IdempotencyRecord> before = records();
        Path file = dir.resolve("records.jsonl");
        assertThat(m.export(file)).isEqualTo(before.size());
        assertThat(Files.readAllLines(file).get(0)).contains("\"format\":\"idempotency-jakarta-export\"").contains("\"version\":2");
        m.clear();
        assertThat(records()).isEmpty();
        assertThat(m.importFrom(file)).isEqualTo(before.size());
        assertThat(recordsAsText(records())).isEqualTo(recordsAsText(before));
        assertThat(new String(m.retrieve(RequestKey.of("b")), StandardCharsets.UTF_8)).isEqualTo("two");
    }

    /**
     * An import into a store in use meets a key that a call still running has claimed: replacing that claim would give
     * the call's retry an answer the call did not give (and the call, finishing, a lost lease). It is refused whole.
     */
    @Test
    void m7AnImportNeverReplacesAClaimStillRunning(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node("import-live", Map.of("idempotency.claim", "leased"));
        dev.idempotency.Idempotency idempotency = containers.get(containers.size() - 1).select(dev.idempotency.Idempotency.class).get();
        assertThat(idempotency.call("payments", "k-1", "pay 10", String.class, () -> "the old answer")).isEqualTo("the old answer");
        Path file = dir.resolve("records.jsonl");
        assertThat(m.export(file)).isEqualTo(1);
        m.clear();
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
            try {
                return idempotency.call("payments", "k-1", "pay 10", String.class, () -> {
                    running.countDown();
                    assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                    return "the running call's answer";
                });
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> m.importFrom(file)).isInstanceOf(IdempotencyTransferException.class)
                .hasMessageContaining("a call still running").hasMessageContaining("nothing was imported");
        finish.countDown();
        assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("the running call's answer");
        assertThat(idempotency.call("payments", "k-1", "pay 10", String.class, () -> "run again"))
                .as("its retry gets its answer").isEqualTo("the running call's answer");
    }

    /**
     * More records than one batch of the export's reads and the import's writes (200), some with the same first-seen
     * time: every record goes out once, in order, and comes back equal.
     */
    @Test
    void m7ExportAndImportInBatchesLoseAndRepeatNothing(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        for (int i = 0; i < 450; i++) {
            m.store(RequestKey.of("batch-" + i), "answer " + i);
        }
        List<IdempotencyRecord> before = records();
        Path file = dir.resolve("batches.jsonl");
        assertThat(m.export(file)).isEqualTo(450);
        assertThat(Files.readAllLines(file)).hasSize(451).doesNotHaveDuplicates();
        try (java.util.stream.Stream<Path> left = Files.list(dir)) {
            assertThat(left).as("nothing left beside the export").containsExactly(file);
        }
        m.clear();
        assertThat(m.importFrom(file)).isEqualTo(450);
        assertThat(recordsAsText(records()).lines().sorted().toList()).isEqualTo(recordsAsText(before).lines().sorted().toList());
        assertThat(new String(m.retrieve(RequestKey.of("batch-449")), StandardCharsets.UTF_8)).isEqualTo("answer 449");
    }

    @Test
    void m7BadFilesAreNamedExceptionsAndLeaveTheStoreAsItWas(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        m.store(RequestKey.of("a"), "one");
        m.store(RequestKey.of("b"), "two");
        Path good = dir.resolve("good.jsonl");
        m.export(good);
        m.clear();
        m.store(RequestKey.of("c"), "three");
        String state = recordsAsText(records());

        List<String> lines = Files.readAllLines(good);
        Path truncated = Files.write(dir.resolve("truncated.jsonl"), lines.subList(0, lines.size() - 1));
        assertThatThrownBy(() -> m.importFrom(truncated)).isInstanceOf(IdempotencyTransferException.class).hasMessageContaining("truncated");
        Path corrupt = Files.write(dir.resolve("corrupt.jsonl"), List.of(lines.get(0), lines.get(1), "{\"namespace\": oops"));
        assertThatThrownBy(() -> m.importFrom(corrupt)).isInstanceOf(IdempotencyTransferException.class).hasMessageContaining("corrupt");
        Path notAnExport = Files.writeString(dir.resolve("other.txt"), "hello");
        assertThatThrownBy(() -> m.importFrom(notAnExport)).isInstanceOf(IdempotencyTransferException.class);
        assertThatThrownBy(() -> m.importFrom(dir.resolve("missing.jsonl"))).isInstanceOf(IdempotencyTransferException.class);
        assertThatThrownBy(() -> m.export(dir.resolve("no/such/dir/out.jsonl"))).isInstanceOf(IdempotencyTransferException.class);
        assertThat(recordsAsText(records())).as("the store is as it was").isEqualTo(state);
    }

    /** A store of three records exported to {@code good.jsonl}, then changed (so that a failed import shows). */
    List<String> exportedThenChanged(IdempotencyManager m, Path dir) throws Exception {
        m.store(RequestKey.of("a"), "one");
        m.store(RequestKey.of("b"), "two");
        m.store(RequestKey.of("c"), "three");
        Path good = dir.resolve("good.jsonl");
        m.export(good);
        m.clear();
        m.store(RequestKey.of("d"), "four");
        return Files.readAllLines(good);
    }

    void refused(IdempotencyManager m, Path dir, List<String> lines, String... message) throws Exception {
        String state = recordsAsText(records());
        Path file = Files.write(dir.resolve("hostile-" + System.nanoTime() + ".jsonl"), lines);
        assertThatThrownBy(() -> m.importFrom(file)).isInstanceOf(IdempotencyTransferException.class)
                .hasMessageContainingAll(message);
        assertThat(recordsAsText(records())).as("nothing stored changed").isEqualTo(state);
    }

    @Test
    void m7HostileExportsAreRefusedNamingTheLineAndChangeNothing(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        List<String> lines = exportedThenChanged(m, dir);
        assertThat(lines).hasSize(4);
        // truncated: the last record gone, or cut in the middle
        refused(m, dir, lines.subList(0, 3), "is truncated: its header announces 3 records, it holds 2 and ends at line 3");
        refused(m, dir, List.of(lines.get(0), lines.get(1), lines.get(2), lines.get(3).substring(0, lines.get(3).length() / 2)),
                "is corrupt at line 4");
        // reordered: two records swapped
        refused(m, dir, List.of(lines.get(0), lines.get(2), lines.get(1), lines.get(3)), "was changed after its export at line 2");
        // duplicated: a record twice (the count edited to match, too)
        refused(m, dir, List.of(lines.get(0), lines.get(1), lines.get(2), lines.get(3), lines.get(3)), "line 5 is one too many");
        refused(m, dir, List.of(lines.get(0).replace("\"records\":3", "\"records\":4"), lines.get(1), lines.get(2), lines.get(3), lines.get(3)),
                "was changed after its export at line 5");
        // hand-edited: another stored answer, or a status, in valid JSON
        String b64 = java.util.Base64.getEncoder().encodeToString(bytes("two"));
        int two = 1;
        while (!lines.get(two).contains(b64)) {
            two++; // an export lists records in the order of their ids
        }
        List<String> edited = new ArrayList<>(lines);
        edited.set(two, lines.get(two).replace(b64, java.util.Base64.getEncoder().encodeToString(bytes("TWO"))));
        refused(m, dir, edited, "was changed after its export at line " + (two + 1));
        refused(m, dir, List.of(lines.get(0), lines.get(1), lines.get(2), lines.get(3).replace("\"COMPLETED\"", "\"IN_PROGRESS\"")),
                "was changed after its export at line 4");
        // oversized: a line over the limit is refused before it is read whole
        refused(m, dir, List.of(lines.get(0), lines.get(1), lines.get(2), "{\"namespace\":\"" + "x".repeat(TransferFile.MAX_LINE) + "\"}"),
                "has a line over " + TransferFile.MAX_LINE + " characters at line 4");
        // and the file as exported imports
        assertThat(m.importFrom(Files.write(dir.resolve("again.jsonl"), lines))).isEqualTo(3);
    }

    @Test
    void m7VersionOneExportsStillImportAndAreCheckedForWholeRecordsAndRepeatedKeys(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        List<String> v2 = exportedThenChanged(m, dir);
        List<String> v1 = new ArrayList<>();
        v1.add(v2.get(0).replace("\"version\":2", "\"version\":1"));
        for (String line : v2.subList(1, v2.size())) {
            v1.add(line.replaceFirst("\"check\":\"[0-9a-f]{64}\",", ""));
        }
        assertThat(v1.get(1)).doesNotContain("check");
        refused(m, dir, List.of(v1.get(0).replace("\"records\":3", "\"records\":2"), v1.get(1), v1.get(1)),
                "repeats a key at line 3: line 2 has the same namespace, principal and key");
        refused(m, dir, List.of(v1.get(0).replace("\"records\":3", "\"records\":1"), v1.get(1).replace("\"COMPLETED\"", "\"DONE\"")),
                "is corrupt at line 2: the record has no known status");
        refused(m, dir, List.of(v1.get(0).replace("\"records\":3", "\"records\":1"), v1.get(1).replaceFirst("\"completedAt\":\\d+,", "")),
                "is corrupt at line 2: the record is finished but has no completedAt");
        assertThat(m.importFrom(Files.write(dir.resolve("v1.jsonl"), v1))).isEqualTo(3);
        assertThat(new String(m.retrieve(RequestKey.of("b")), StandardCharsets.UTF_8)).isEqualTo("two");
    }

    @Test
    void m7AnExportWhileRecordsAreWrittenIsOneConsistentMoment(@TempDir Path dir) throws Exception {
        IdempotencyManager m = node();
        java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
        AtomicInteger written = new AtomicInteger();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            int writer = w;
            writers.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; writing.get() && i < 5_000; i++) {
                    m.store(RequestKey.of("w" + writer + "-" + i), "answer " + i);
                    written.incrementAndGet();
                }
            }));
        }
        List<Path> exports = new ArrayList<>();
        for (int e = 0; e < 5; e++) {
            int before = written.get();
            Path file = dir.resolve("during-" + e + ".jsonl");
            int n = m.export(file);
            assertThat(n).as("export %d", e).isGreaterThanOrEqualTo(before);
            assertThat(Files.readAllLines(file)).hasSize(n + 1);
            exports.add(file);
        }
        writing.set(false);
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        for (Path file : exports) {
            try (java.sql.Connection c = TestDatabase.H2.connect(); java.sql.Statement st = c.createStatement()) {
                st.executeUpdate("delete from idempotency_record");
            }
            long finished = Files.readAllLines(file).stream().skip(1).filter(l -> !l.contains("\"IN_PROGRESS\"")).count();
            int n = m.importFrom(file);
            List<IdempotencyRecord> imported = records();
            // each record as one committed moment left it, its own answer; a moment's claims (no call's by now) are
            // not imported
            assertThat(n).as(file.getFileName().toString()).isEqualTo(finished);
            assertThat(imported).as(file.getFileName().toString()).hasSize(n).allSatisfy(r -> {
                assertThat(r.status()).isEqualTo(RecordStatus.COMPLETED);
                String i = r.scopedKey().key().substring(r.scopedKey().key().indexOf('-') + 1);
                assertThat(new String(r.response(), StandardCharsets.UTF_8)).isEqualTo("answer " + i);
            });
        }
    }

    @Test
    void m7bAnImportNeverReplacesALaterAnswer(@TempDir Path dir) {
        IdempotencyManager m = node();
        RequestKey key = RequestKey.of("lives");
        m.store(key, "first life");
        Path file = dir.resolve("older.jsonl");
        assertThat(m.export(file)).isEqualTo(1);
        assertThat(m.clear()).isEqualTo(1);
        CLOCK.advance(Duration.ofSeconds(5));
        m.store(key, "second life");
        // the file's older answer is offered, and the key's later one stays
        assertThat(m.importFrom(file)).isEqualTo(1);
        assertThat(new String(m.retrieve(key), StandardCharsets.UTF_8)).isEqualTo("second life");
        // where the key holds nothing, the file's answer is written
        assertThat(m.clear()).isEqualTo(1);
        assertThat(m.importFrom(file)).isEqualTo(1);
        assertThat(new String(m.retrieve(key), StandardCharsets.UTF_8)).isEqualTo("first life");
    }

    @Test
    void m8ClearOlderThanAndTrimToOldestFirst() {
        IdempotencyManager m = node();
        for (int i = 0; i < 5; i++) {
            m.store(RequestKey.of("r" + i), "x");
            CLOCK.advance(Duration.ofMinutes(1));
        }
        assertThat(m.trimTo(3)).isEqualTo(2);
        assertThat(keys()).containsExactlyInAnyOrder("r2", "r3", "r4");
        assertThat(m.clearOlderThan(Duration.ofSeconds(150))).isEqualTo(1); // r2 is 3 minutes old
        assertThat(keys()).containsExactlyInAnyOrder("r3", "r4");
        assertThatThrownBy(() -> m.retrieve(RequestKey.of("r2"))).isInstanceOf(IdempotencyResponseNotFoundException.class);
        assertThat(m.clear()).isEqualTo(2);
    }

    @Test
    void m8ManagementKeepsRunningCallsClaimsAndEvictsOnlyWhatItDeleted() {
        IdempotencyManager m = node("batches", Map.of("idempotency.purge.batch-size", "2"));
        IdempotencyRuntime runtime = containers.get(0).select(IdempotencyRuntime.class).get();
        IdempotencyEngine engine = runtime.engine();
        for (int i = 0; i < 5; i++) {
            m.store(RequestKey.of("old" + i), "x");
        }
        // A call running now (a leased claim of an annotated method, its lease alive).
        ScopedKey running = new ScopedKey("payments", "alice", "running");
        Instant now = engine.clock().instant();
        assertThat(engine.store().claim(new ClaimRequest(running, "fp", null, "node", now, now.plus(Duration.ofMinutes(5)),
                now.plus(Duration.ofHours(1))))).isInstanceOf(Claim.Acquired.class);
        CLOCK.advance(Duration.ofMinutes(1));
        m.store(RequestKey.of("young"), "y");
        ScopedKey young = new ScopedKey("idempotency-manager/responses", "anonymous", "young");
        ScopedKey old0 = new ScopedKey("idempotency-manager/responses", "anonymous", "old0");
        RecordCache cache = runtime.recordCacheOrNone();
        assertThat(cache.get(young)).isPresent();

        assertThat(m.clearOlderThan(Duration.ofSeconds(30))).as("five old records, in batches of two").isEqualTo(5);
        assertThat(cache.get(old0)).as("deleted: evicted").isEmpty();
        assertThat(cache.get(young)).as("kept: still cached").isPresent();
        assertThat(m.trimTo(0)).isEqualTo(1);
        assertThat(m.clear()).isZero();
        assertThat(engine.store().find(running)).as("the running call's claim").hasValueSatisfying(r ->
                assertThat(r.status()).isEqualTo(RecordStatus.IN_PROGRESS));
        CLOCK.advance(Duration.ofMinutes(5));
        assertThat(m.clear()).as("its holder stopped renewing: its lease ended").isEqualTo(1);
    }

    @Test
    void m8AnAutomaticPolicyByConfigurationRunsWithThePurge() {
        IdempotencyManager m = node("policy", Map.of("idempotency.manager.policy", "size", "idempotency.manager.max-records", "2"));
        for (int i = 0; i < 4; i++) {
            m.store(RequestKey.of("r" + i), "x");
            CLOCK.advance(Duration.ofSeconds(1));
        }
        containers.get(0).select(IdempotencyRuntime.class).get().purgeNow();
        assertThat(keys()).containsExactlyInAnyOrder("r2", "r3");
    }

    @ApplicationScoped
    public static class KeepNothing implements ManagementPolicy {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Override
        public void apply(IdempotencyManager manager) {
            RUNS.incrementAndGet();
            manager.clear();
        }
    }

    @Test
    void m8AnApplicationsPolicyBeanReplacesTheLibrarys() {
        IdempotencyManager m = node("own-policy", Map.of("idempotency.manager.policy", "size"), KeepNothing.class);
        m.store(RequestKey.of("r"), "x");
        containers.get(0).select(IdempotencyRuntime.class).get().purgeNow();
        assertThat(KeepNothing.RUNS).hasPositiveValue();
        assertThat(keys()).isEmpty();
    }

    @Test
    void m9TwoNodes() throws Exception {
        Map<String, String> cluster = Map.of("idempotency.cache.mode", "cluster",
                "idempotency.cache.cluster-name", "manager-test", "idempotency.cache.initial-hosts", "127.0.0.1[7921],127.0.0.1[7922]");
        Map<String, String> one = new HashMap<>(cluster);
        one.put("idempotency.cache.bind-port", "7921");
        one.put("idempotency.node-id", "node-1");
        Map<String, String> two = new HashMap<>(cluster);
        two.put("idempotency.cache.bind-port", "7922");
        two.put("idempotency.node-id", "node-2");
        IdempotencyManager node1 = node("node-1", one);
        IdempotencyManager node2 = node("node-2", two);
        awaitMembers(2);

        RequestKey first = RequestKey.of("seen-on-1");
        assertThat(node1.check(first).seen()).isFalse();
        cacheWritesDone(); // the sighting's cache write leaves the request's thread: a check in the same instant asks the store
        long before = STATEMENTS.get();
        assertThat(node2.check(first).seen()).as("node 2 sees a request first seen on node 1").isTrue();
        // Seen: from the replicated cache; no response known to it: one read of the response's record, by primary key.
        assertThat(STATEMENTS.get() - before).as("from the replicated cache, the response from the store").isEqualTo(1);
        cacheWritesDone();
        CLOCK.advance(Duration.ofSeconds(4));
        assertThat(node1.check(first).sinceLastSeen()).as("node 2's sighting, through the replicated cache").contains(Duration.ofSeconds(4));

        RequestKey awaited = RequestKey.of("stored-on-1");
        CompletableFuture<Optional<byte[]>> waiter = CompletableFuture.supplyAsync(() -> node2.await(awaited, Duration.ofSeconds(120)));
        awaitWaiter(containers.get(1));
        AtomicInteger calls = new AtomicInteger();
        node2.addListener(awaited, (k, r) -> calls.incrementAndGet());
        node1.store(awaited, "from node 1");
        // Woken by node 1's store, long before its 120 s timeout (a waiter that missed the wake-up reads again only then).
        assertThat(waiter.get(30, TimeUnit.SECONDS)).hasValueSatisfying(b -> assertThat(b).isEqualTo(bytes("from node 1")));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (calls.get() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        node1.store(awaited, "from node 1");
        assertThat(calls).as("node 2's listener fired once for node 1's store").hasValue(1);
    }

    /**
     * "Last seen" moves with every sighting on every node of a replicated cache: a sighting answered from the cache
     * writes its new "last seen" into the same record's entry (the cache keeps a record that finished later, never an
     * older "last seen" of the same one).
     */
    @Test
    void m9ClusteredNodesAgreeOnLastSeenAfterEverySighting() {
        IdempotencyManager[] nodes = twoClusteredNodes("manager-last-seen", 7923);
        RequestKey k = RequestKey.of("seen-three-times");
        assertThat(nodes[0].check(k).seen()).isFalse(); // t0
        cacheWritesDone();
        CLOCK.advance(Duration.ofSeconds(5));
        assertThat(nodes[1].check(k).sinceLastSeen()).as("t0+5 s, on node 2").contains(Duration.ofSeconds(5));
        cacheWritesDone();
        CLOCK.advance(Duration.ofSeconds(4));
        assertThat(nodes[0].check(k).sinceLastSeen()).as("t0+9 s, on node 1: since node 2's sighting").contains(Duration.ofSeconds(4));
        cacheWritesDone();
        CLOCK.advance(Duration.ofSeconds(2));
        assertThat(nodes[1].check(k).sinceLastSeen()).as("t0+11 s, on node 2: since node 1's sighting").contains(Duration.ofSeconds(2));
        cacheWritesDone();
        CLOCK.advance(Duration.ofSeconds(1));
        assertThat(nodes[1].check(k).sinceLastSeen()).as("t0+12 s, on node 2 again").contains(Duration.ofSeconds(1));
    }

    /** Two nodes in one JGroups cluster on loopback (ports {@code port} and {@code port + 1}), both members. */
    IdempotencyManager[] twoClusteredNodes(String clusterName, int port) {
        Map<String, String> cluster = Map.of("idempotency.cache.mode", "cluster", "idempotency.cache.cluster-name", clusterName,
                "idempotency.cache.initial-hosts", "127.0.0.1[" + port + "],127.0.0.1[" + (port + 1) + "]");
        IdempotencyManager[] nodes = new IdempotencyManager[2];
        for (int i = 0; i < 2; i++) {
            Map<String, String> config = new HashMap<>(cluster);
            config.put("idempotency.cache.bind-port", String.valueOf(port + i));
            config.put("idempotency.node-id", clusterName + "-" + (i + 1));
            nodes[i] = node(clusterName + "-" + (i + 1), config);
        }
        awaitMembers(2);
        return nodes;
    }

    /**
     * A listener on a node that shares no cache with the node that stores the response (each has a local cache of its
     * own; the same holds for a cluster cache bypassed in a partition, or a completion whose cache write failed) is
     * called all the same: watched keys are looked at again in the store, as often as a waiter would.
     */
    @Test
    void m9AListenerHearsOfAResponseStoredOnANodeItSharesNoCacheWith() throws Exception {
        IdempotencyManager node1 = node("alone-1", Map.of("idempotency.node-id", "node-1", "idempotency.cache.mode", "local"));
        IdempotencyManager node2 = node("alone-2", Map.of("idempotency.node-id", "node-2", "idempotency.cache.mode", "local"));
        RequestKey k = RequestKey.of("stored-elsewhere");
        java.util.concurrent.CountDownLatch heard = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<String> response = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        node2.addListener(k, (key, r) -> {
            calls.incrementAndGet();
            response.set(new String(r, StandardCharsets.UTF_8));
            heard.countDown();
        });
        node1.store(k, "from node 1");
        assertThat(heard.await(30, TimeUnit.SECONDS)).as("node 2's listener is called").isTrue();
        assertThat(response.get()).contains("from node 1");
        node1.store(k, "from node 1");
        assertThat(calls).as("once").hasValue(1);
    }

    /** Until a waiter is subscribed on that node: a store before it would be found by its first read, proving nothing. */
    static void awaitWaiter(WeldContainer node) {
        var signals = node.select(IdempotencyRuntime.class).get().signals();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (signals.waiters() == 0) {
            assertThat(System.nanoTime()).as("a waiter subscribes").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    /** Until the cache writes every node queued so far are done. */
    void cacheWritesDone() {
        for (WeldContainer c : containers) {
            var cache = (dev.idempotency.cache.ClusterRecordCache) c.select(IdempotencyRuntime.class).get().recordCache();
            assertThat(cache.awaitWrites(Duration.ofSeconds(30))).as("the cache's writes done").isTrue();
        }
    }

    void awaitMembers(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (WeldContainer c : containers) {
            var cache = ((dev.idempotency.cache.ClusterRecordCache) c.select(IdempotencyRuntime.class).get().recordCache()).cache();
            while (cache.getCacheManager().getMembers().size() < n) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
    }

    List<IdempotencyRecord> records() {
        return ((dev.idempotency.spi.StoreManagement) containers.get(0).select(IdempotencyRuntime.class).get().engine().store()).all();
    }

    List<String> keys() {
        return records().stream().filter(r -> r.scopedKey().namespace().equals("idempotency-manager/responses"))
                .map(r -> r.scopedKey().key()).toList();
    }

    static String recordsAsText(List<IdempotencyRecord> records) {
        StringBuilder out = new StringBuilder();
        for (IdempotencyRecord r : records) {
            out.append(r.scopedKey()).append(' ').append(r.status()).append(' ').append(r.fingerprint()).append(' ')
                    .append(r.response() == null ? "-" : new String(r.response(), StandardCharsets.ISO_8859_1)).append(' ')
                    .append(r.attempts()).append(' ').append(r.firstSeen()).append(' ').append(r.lastSeen()).append(' ')
                    .append(r.completedAt()).append(' ').append(r.expiresAt()).append(' ').append(r.owner()).append(' ')
                    .append(r.version()).append('\n');
        }
        return out.toString();
    }
}
