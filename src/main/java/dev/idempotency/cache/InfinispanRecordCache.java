package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;

import org.infinispan.Cache;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryCreated;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryModified;
import org.infinispan.notifications.cachelistener.event.CacheEntryEvent;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Finished records in an Infinispan cache under {@link ScopedKey#cacheId()}: an embedded one (local, or clustered:
 * replicated or distributed, synchronous) or a remote one on an Infinispan Server ({@link RemoteCaches}); and the
 * wake-ups of waiting duplicates on every node: a finished record put here, or a tombstone, fires this node's listener
 * (a local one where every node holds every entry, a clustered one in a distributed cache, a Hot Rod client listener on
 * a server's cache), which wakes its local waiters.
 *
 * <p>A released or deleted key leaves a <em>tombstone</em> under its id for {@value #TOMBSTONE_LIFESPAN_SECONDS}
 * s (a short entry that decodes to no record): a finished record read from the store before that release or
 * deletion, and put after it ({@link #putLoaded}, a put-if-absent), finds the tombstone and is not cached, so the
 * cache never outlives its record. A completion ({@link #put}) replaces a tombstone written before the record
 * finished (a key claimed anew after its release or deletion); on a clustered cache, whose completions are written
 * after the commit by a thread of their own, one written at or after it stays (the key was released or deleted
 * after the record finished, while its write waited). A clear (a flush, an import) leaves one such mark for the whole
 * cache ({@link #clear}): for as long as a tombstone lives, a record read or last seen before it is not taken.
 *
 * <p>Every record entry of a clustered cache, or of one whose keys come from a secret, carries an HMAC-SHA-256 over its
 * scope, key and content ({@link RecordBytes}), keyed by the cache's {@link CacheKeys}, and is checked when a node first
 * reads it (a local cache with this JVM's random keys is written by nobody else: its entries' MAC is left zero, and none
 * is checked): an entry that does not verify, or that verifies but sits under another scope's id, is never replayed. It
 * is a miss (the store answers), counted ({@link #rejectedEntries()}), logged once at WARNING (then at FINE), and
 * replaced by a tombstone.
 *
 * <p>Over 400 lines on purpose: the entry protocol (records, tombstones, MACs, conditional puts, the listeners that wake
 * waiters) is read as one: each put's condition follows from the tombstone rule and the MAC check.
 */
public final class InfinispanRecordCache implements ManagedRecordCache {

    private static final Logger LOG = Logger.getLogger(InfinispanRecordCache.class.getName());
    /** Longer than any store read that could race with a release or a deletion. */
    static final long TOMBSTONE_LIFESPAN_SECONDS = 60;
    /** A tombstone's first byte: no version of {@link RecordBytes} starts with it, so it decodes to no record. */
    private static final byte TOMBSTONE = 0;

    /** The embedded cache; {@code null} for a remote one. */
    private final Cache<String, byte[]> embedded;
    /** Its entries (a remote cache's operations bounded in time). */
    private final Entries cache;
    private final Clock clock;
    private final LocalCompletionSignals signals;
    /** Stops this cache's listener. */
    private volatile Runnable unlisten;
    /** How long a remote cache's listener may stay silent after a write of this node's before it is presumed lost. */
    static final java.time.Duration SILENCE = java.time.Duration.ofSeconds(5);
    /** {@link System#nanoTime()} of this node's last write, and of the last event heard (remote caches). */
    private volatile long lastWrite;
    private volatile long lastEvent;
    /** Starts it again (a remote cache's), or {@code null}. */
    private final java.util.function.Function<InfinispanRecordCache, Runnable> listen;
    private final String description;
    private final java.util.function.IntSupplier members;
    private final AtomicLong nonce = new AtomicLong();
    private final ThreadLocal<javax.crypto.Mac> macs;
    /** Whether entries' MACs are checked when read (a shared cache, or keys from a secret). */
    private final boolean verify;
    /**
     * Whether other processes read and write it (clustered, or remote): only then do the optimistic claim's markers go
     * into it. A local cache is this node's alone, and this node's own claims already hold its duplicates off (the
     * engine's map of the keys it runs): a marker there would hold off no one, and cost each first request a
     * put-if-absent and a remove.
     */
    private final boolean shared;
    private final AtomicLong rejected = new AtomicLong();
    /** The records this node decoded last: a replay of a hot key reads its entry once (no MAC, no decoding). */
    private final DecodedEntries decoded = new DecodedEntries();
    private final AtomicLong relistened = new AtomicLong();

    /** With keys of this JVM alone (random): for a cache that no other process reads. */
    public InfinispanRecordCache(Cache<String, byte[]> cache, Clock clock, LocalCompletionSignals signals) {
        this(cache, clock, signals, CacheKeys.random());
    }

    /** @param keys the key of the entries' MAC: the same on every node that shares the cache */
    public InfinispanRecordCache(Cache<String, byte[]> cache, Clock clock, LocalCompletionSignals signals, CacheKeys keys) {
        this.macs = ThreadLocal.withInitial(keys::entryMac);
        CacheMode mode = cache.getCacheConfiguration().clustering().cacheMode();
        // A cache of this JVM alone, with keys of its own, is written by nobody else: checking its MACs would cost
        // every replay an HMAC of the response (about 1.5 us a KiB) and protect against nothing; so would writing them.
        this.verify = keys.fromSecret() || mode.isClustered();
        this.shared = mode.isClustered();
        this.embedded = cache;
        this.cache = Entries.of(cache);
        this.clock = clock;
        this.signals = signals;
        this.description = "an Infinispan cache (" + (mode.isDistributed() ? "clustered, distributed, " + cache.getCacheConfiguration()
                .clustering().hash().numOwners() + " owners" : mode.isReplicated() ? "clustered, replicated" : "local") + ")";
        this.members = () -> cache.getCacheManager().getMembers() == null ? 1 : cache.getCacheManager().getMembers().size();
        // Every node holds every entry of a local or replicated cache, and hears its changes; a distributed cache's
        // changes are heard on their owners only, unless the listener is clustered (every node hears every change).
        Object listener = mode.isReplicated() || !mode.isClustered() ? new WakeUps() : new ClusterWakeUps();
        cache.addListener(listener);
        this.unlisten = () -> cache.removeListener(listener);
        this.listen = null;
    }

    /**
     * A cache elsewhere (a Hot Rod remote cache): its entries' MACs are always checked.
     *
     * @param listen registers the listener that calls {@link #changed(String)} on every change (and
     *               {@link LocalCompletionSignals#signalAll()} when events may have been missed); returns what stops it
     */
    InfinispanRecordCache(Entries remote, String description, java.util.function.IntSupplier members,
                          java.util.function.Function<InfinispanRecordCache, Runnable> listen, Clock clock,
                          LocalCompletionSignals signals, CacheKeys keys) {
        this.macs = ThreadLocal.withInitial(keys::entryMac);
        this.verify = true;
        this.shared = true;
        this.embedded = null;
        this.cache = remote;
        this.clock = clock;
        this.signals = signals;
        this.description = description;
        this.members = members;
        this.listen = listen;
        this.unlisten = listen.apply(this);
    }

    @Override
    public Optional<IdempotencyRecord> get(ScopedKey key) {
        String id = key.cacheId();
        byte[] bytes = cache.get(id);
        if (bytes == null) {
            return Optional.empty();
        }
        IdempotencyRecord r = decoded.of(id, bytes);
        if (r != null) {
            return Optional.of(r); // this very entry, checked (MAC, version, key) when it was first read under this id
        }
        r = verified(id, bytes);
        if (r == null) {
            return Optional.empty();
        }
        if (!r.scopedKey().equals(key)) {
            reject(id, "it is another scope's entry");
            return Optional.empty();
        }
        // Remembered only once it is known to be the key's own: an id names one key (ScopedKey#cacheId), so a later
        // read of the same array under the same id needs no check of its key either.
        decoded.remember(id, bytes, r);
        return Optional.of(r);
    }

    /** The record of an entry whose MAC verifies; {@code null} for a tombstone, another version, or a rejected entry. */
    private IdempotencyRecord verified(String id, byte[] bytes) {
        if (!verify) {
            return RecordBytes.versionOf(bytes) ? RecordBytes.decode(bytes) : null;
        }
        return switch (RecordBytes.check(bytes, macs.get())) {
            case VERIFIED -> RecordBytes.decode(bytes);
            case OTHER -> null;
            case FORGED -> {
                reject(id, "its MAC does not verify (forged, or written under another secret)");
                yield null;
            }
        };
    }

    /** A cache entry not to be trusted: counted, logged (the first at WARNING), replaced by a tombstone. */
    private void reject(String id, String why) {
        long n = rejected.incrementAndGet();
        LOG.log(n == 1 ? Level.WARNING : Level.FINE, "Rejected a cache entry ({0} so far): {1}; the store answers instead. "
                + "Nodes that share the cache need the same idempotency.cache.secret", new Object[] {n, why});
        try {
            cache.put(id, tombstone(), TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not replace a rejected cache entry", e);
        }
    }

    /**
     * The MAC a written entry carries: none (zeros) where no reader checks it (a local cache with this JVM's random keys,
     * which no one else holds: a MAC only this cache could check, and never does, would cost each write an HMAC of its
     * response).
     */
    private javax.crypto.Mac writeMac() {
        return verify ? macs.get() : null;
    }

    /** Entries rejected since this cache started: their MAC did not verify, or they sat under another scope's id. */
    public long rejectedEntries() {
        return rejected.get();
    }

    @Override
    public void put(IdempotencyRecord finished) {
        put(finished, null);
    }

    @Override
    public void put(IdempotencyRecord finished, java.time.Duration atMost) {
        long lifespan = atMost == null ? lifespanMillis(finished) : Math.min(lifespanMillis(finished), atMost.toMillis());
        if (lifespan <= 0) {
            return;
        }
        String id = finished.scopedKey().cacheId();
        byte[] entry = RecordBytes.encode(finished, writeMac());
        // What it holds was known at its last sighting (a completion's is its completion): a cache emptied since then
        // (a flush, an import) may have been emptied of it on purpose.
        long asOf = knownAt(finished);
        if (embedded == null || !shared) {
            if (embedded != null && clearedSince(asOf)) {
                return;
            }
            cache.put(id, entry, lifespan, TimeUnit.MILLISECONDS);
            wrote();
            undoIfClearedSince(asOf, id, entry);
            return;
        }
        // A clustered cache's completions are written by a writer thread of their own, after the commit, and may wait
        // there: by then another node may have released or deleted the key and left its tombstone, and a call there may
        // have claimed it anew and finished. A tombstone written after this record finished (less a margin for the
        // nodes' clocks: not caching is always safe) stays, as does a record that finished no earlier (the store no
        // longer holds this one); an older tombstone, or an older record, is removed if it is still that very entry,
        // and this one put if the id is then free (two conditional writes: anything written in between is looked at
        // again). A record with no completion time never replaces a tombstone.
        long finishedAt = finished.completedAt() == null ? Long.MIN_VALUE : finished.completedAt().toEpochMilli();
        for (int attempt = 0; attempt < 3; attempt++) {
            byte[] present = embedded.get(id);
            if (present != null && isTombstone(present) && tombstoneTime(present) + CLOCK_MARGIN_MILLIS > finishedAt) {
                return;
            }
            if (clearedSince(asOf)) {
                return;
            }
            IdempotencyRecord there = present == null || isTombstone(present) ? null : verified(id, present);
            if (there != null && clearedSince(knownAt(there))) {
                // Known only from before the clear (left from before it, or read from the store since with an old "last
                // seen"): not kept as "as new or newer"; this write, known since the clear, takes the id.
                cache.removeIf(id, present);
                continue;
            }
            if (there != null && there.completedAt() != null && there.completedAt().toEpochMilli() >= finishedAt
                    && !laterSightingOf(there, finished)) {
                return; // a record as new or newer (the key claimed anew after a deletion, on another node) stays
            }
            if (present != null && java.util.Arrays.equals(present, entry)) {
                return; // this very entry is there already
            }
            if (present != null) {
                cache.removeIf(id, present); // only that very entry: one written since then stays, and is looked at
            }
            if (cache.add(id, entry, lifespan, TimeUnit.MILLISECONDS)) {
                wrote();
                undoIfClearedSince(asOf, id, entry);
                return;
            }
        }
        // Changed under this write three times: left to the store (a miss costs a read, never a wrong answer).
    }

    /**
     * Whether {@code update} is the same finished record as {@code there} (the same completion, first sighting and
     * fingerprint) seen since: a sighting moves its {@code lastSeen}, or notes it, and the entry must follow on every
     * node, where a completion of the same instant from another claim stays as it is.
     */
    private static boolean laterSightingOf(IdempotencyRecord there, IdempotencyRecord update) {
        // The entry holds milliseconds: compared as such.
        return update.completedAt() != null && there.completedAt().toEpochMilli() == update.completedAt().toEpochMilli()
                && update.firstSeen() != null && there.firstSeen() != null && update.lastSeen() != null && there.lastSeen() != null
                && there.firstSeen().toEpochMilli() == update.firstSeen().toEpochMilli()
                && java.util.Objects.equals(there.fingerprint(), update.fingerprint()) && there.status() == update.status()
                && update.lastSeen().toEpochMilli() >= there.lastSeen().toEpochMilli();
    }

    /**
     * How far apart two nodes' clocks may be (the library's clock follows the store's, to within a round trip): a
     * tombstone this much older than a completion still keeps it out.
     */
    static final long CLOCK_MARGIN_MILLIS = 250;

    /**
     * When a tombstone was written (the clock's epoch milliseconds); {@link Long#MIN_VALUE} for one that does not say
     * (written by an older version of the library).
     */
    static long tombstoneTime(byte[] tombstone) {
        return tombstone.length >= 17 ? java.nio.ByteBuffer.wrap(tombstone, 9, 8).getLong() : Long.MIN_VALUE;
    }

    @Override
    public void putLoaded(IdempotencyRecord finished) {
        putLoaded(finished, null);
    }

    @Override
    public void putLoaded(IdempotencyRecord finished, java.time.Instant readStarted) {
        long lifespan = lifespanMillis(finished);
        long asOf = readStartedAt(readStarted, clock);
        if (lifespan <= 0 || embedded != null && clearedSince(asOf)) {
            return;
        }
        // Absent only: a tombstone (released or deleted since the read) or the record itself stays as it is.
        String id = finished.scopedKey().cacheId();
        byte[] entry = RecordBytes.encode(finished, writeMac());
        if (cache.add(id, entry, lifespan, TimeUnit.MILLISECONDS)) {
            undoIfClearedSince(asOf, id, entry);
        }
    }

    /**
     * Whether the cache was emptied at or after {@code asOf} (less the nodes' clock margin), within the last
     * {@value #TOMBSTONE_LIFESPAN_SECONDS} s: what was known at {@code asOf} may be what the clear meant to remove
     * (a flush made after a deletion whose tombstone it took along, an import that replaced records). Not caching
     * is always safe.
     */
    private boolean clearedSince(long asOf) {
        byte[] mark = cache.get(CLEARED_ID);
        return mark != null && isTombstone(mark) && asOf <= tombstoneTime(mark) + CLOCK_MARGIN_MILLIS;
    }

    /**
     * An entry just written whose state may predate a clear made meanwhile: removed again (the clear writes its mark
     * first and then removes the entries it meets; a write either sees the mark here, or was there for the clear to
     * meet).
     */
    private void undoIfClearedSince(long asOf, String id, byte[] entry) {
        if (clearedSince(asOf)) {
            cache.removeIf(id, entry);
        }
    }

    /** The id of the mark a clear leaves: when the cache was last emptied ({@link #clearedSince}). */
    private static final String CLEARED_ID = "\u0000cleared";

    /**
     * When what a finished record holds was last known to be the store's (epoch milliseconds): its last sighting (a
     * completion's is its completion; an entry's is never later than its write), else its completion;
     * {@link Long#MIN_VALUE} when it says neither.
     */
    static long knownAt(IdempotencyRecord r) {
        return r.lastSeen() != null ? r.lastSeen().toEpochMilli() : r.completedAt() != null ? r.completedAt().toEpochMilli() : Long.MIN_VALUE;
    }

    /** When a read whose start is not told is taken to have started: a tombstone's life ago (the longest a read may race). */
    static long readStartedAt(java.time.Instant readStarted, Clock clock) {
        return readStarted != null ? readStarted.toEpochMilli() : clock.millis() - TimeUnit.SECONDS.toMillis(TOMBSTONE_LIFESPAN_SECONDS);
    }

    /** How long an entry for the record may live: until the record expires; zero or less: not to be held. */
    private long lifespanMillis(IdempotencyRecord record) {
        return record.isFinished() ? record.expiresAt().toEpochMilli() - clock.millis() : 0;
    }

    /**
     * Released or deleted ({@link #remove} is this too): a tombstone, which also wakes the waiters on every node, one
     * of which claims next.
     */
    @Override
    public void evict(ScopedKey key) {
        evict(key.cacheId());
    }

    /** {@link #evict(ScopedKey)} by the key's {@link ScopedKey#cacheId()}. */
    void evict(String cacheId) {
        cache.put(cacheId, tombstone(), TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
        wrote();
    }

    /**
     * The optimistic claim's marker: an entry of its own beside the key's record ({@link #markerId}), put if absent, with
     * the holder's name as its value and {@code atMost} as its life. It decodes to no record, so a reader never replays
     * it; a forged one can only hold duplicates off until it expires.
     */
    @Override
    public boolean mark(ScopedKey key, String holder, java.time.Duration atMost) {
        return !shared || cache.add(markerId(key.cacheId()), marker(holder), Math.max(1, atMost.toMillis()), TimeUnit.MILLISECONDS);
    }

    @Override
    public void unmark(ScopedKey key, String holder) {
        if (shared) {
            cache.removeIf(markerId(key.cacheId()), marker(holder));
        }
    }

    /** Whether an id is a running marker's ({@link #markerId}). */
    static boolean isMarkerId(String id) {
        return id.endsWith(MARKER_SUFFIX);
    }

    /** Whether an entry is a tombstone (a released or deleted key, or a probe). */
    static boolean isTombstone(byte[] entry) {
        return entry.length > 0 && entry[0] == TOMBSTONE;
    }

    /**
     * A write every member that holds the probe's id must take (a tombstone under an id no key has, then removed): it
     * returns once they took it, or fails past the cache's remote timeout; it proves that they answer.
     */
    void probe() {
        byte[] probe = tombstone();
        cache.put(PROBE_ID, probe, TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
        cache.removeIf(PROBE_ID, probe);
    }

    private static final String PROBE_ID = "\u0000probe";

    /** A marker's id: the record's, with a suffix no record id has (ids are hex digests or escaped keys). */
    static String markerId(String cacheId) {
        return cacheId + MARKER_SUFFIX;
    }

    private static final String MARKER_SUFFIX = "\u0000running";
    /** A marker's first byte (never read as a record: it sits under an id of its own). */
    private static final byte MARKER = 'M';

    private static byte[] marker(String holder) {
        byte[] name = holder.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return java.nio.ByteBuffer.allocate(1 + name.length).put(MARKER).put(name).array();
    }

    /** A write of this node's that its own listener must hear of (a put always changes the entry). */
    private void wrote() {
        if (listen != null) {
            lastWrite = System.nanoTime();
        }
    }

    /**
     * A remote cache's listener that has heard nothing for {@link #SILENCE} since a write of this node's, which it
     * should have heard of: the Hot Rod client drops a listener whose move to another server failed, so it may be gone.
     */
    boolean listenerSilent() {
        long write = lastWrite;
        return listen != null && write - lastEvent > 0 && System.nanoTime() - write > SILENCE.toNanos();
    }

    /** A tombstone: its marker byte, a nonce (no two alike), and when it was written ({@link #tombstoneTime}). */
    private byte[] tombstone() {
        return tombstone(nonce.incrementAndGet(), clock.millis());
    }

    /** A tombstone with this nonce, written at {@code millis} (epoch milliseconds). */
    static byte[] tombstone(long nonce, long millis) {
        return java.nio.ByteBuffer.allocate(17).put(TOMBSTONE).putLong(nonce).putLong(millis).array();
    }

    /**
     * Empties the cache of its records, on every node, and keeps out what was read or last seen before: the mark of the
     * clear goes in first ({@link #clearedSince}: for {@value #TOMBSTONE_LIFESPAN_SECONDS} s, a record known only
     * before it is not taken), then every record entry is removed, one by one, if it is still the entry met. A write
     * made meanwhile either finds the mark ({@link #undoIfClearedSince}), or was made before it and is met here.
     * Tombstones stay (they keep out older reads of their keys); running markers go. Not Infinispan's own clear: it
     * takes no key's lock, and a write racing with it can be left on some nodes and not others.
     */
    @Override
    public void clear() {
        cache.put(CLEARED_ID, tombstone(nonce.incrementAndGet(), clock.millis()), TOMBSTONE_LIFESPAN_SECONDS, TimeUnit.SECONDS);
        wrote();
        cache.forEach((id, bytes) -> {
            if (!isTombstone(bytes)) {
                cache.removeIf(id, bytes);
            }
        });
    }

    @Override
    public int size() {
        return cache.size();
    }

    @Override
    public boolean holds(ScopedKey key) {
        return cache.containsKey(key.cacheId());
    }

    /** The embedded cache; {@code null} for a remote one. */
    public Cache<String, byte[]> cache() {
        return embedded;
    }

    @Override
    public boolean shared() {
        return shared;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public int members() {
        return members.getAsInt();
    }

    @Override
    public void close() {
        unlisten.run();
    }

    /** An entry changed (on any node): wakes this node's waiters of its key. */
    void changed(String id) {
        lastEvent = System.nanoTime();
        try {
            signals.signal(id);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not wake the waiters of " + id, e);
        }
    }

    /**
     * A remote cache that failed and answers again: its listener is registered anew (the client's own failover may
     * have lost it), and every waiter of this node looks at its key again (events in between are lost).
     */
    void listenAgain() {
        if (listen == null) {
            return;
        }
        try {
            unlisten.run();
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Could not remove the cache's old listener", e);
        }
        lastEvent = lastWrite = System.nanoTime();
        unlisten = listen.apply(this);
        relistened.incrementAndGet();
        missedEvents();
    }

    @Override
    public long listenerRenewals() {
        return relistened.get();
    }


    /** Events may have been missed (a listener moved to another server): every waiter of this node looks again. */
    void missedEvents() {
        signals.signalAll();
    }

    @Listener(observation = Listener.Observation.POST)
    public final class WakeUps {
        @CacheEntryCreated
        @CacheEntryModified
        public void changed(CacheEntryEvent<String, byte[]> event) {
            InfinispanRecordCache.this.changed(event.getKey());
        }
    }

    /** As {@link WakeUps}, for a distributed cache: every node hears every change, not only the owners. */
    @Listener(clustered = true, sync = false, observation = Listener.Observation.POST)
    public final class ClusterWakeUps {
        @CacheEntryCreated
        @CacheEntryModified
        public void changed(CacheEntryEvent<String, byte[]> event) {
            InfinispanRecordCache.this.changed(event.getKey());
        }
    }
}
