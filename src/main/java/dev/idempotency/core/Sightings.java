package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.SightingRecords;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * "Seen" and "last seen" of ids ({@code IdempotencyManager.check}), as stored state: an id's first
 * sighting claims a record for it in the store (the judge of "new", as for every key), and every later sighting
 * moves the record's {@code lastSeen}.
 *
 * <p>A known id is answered from the cache, with no SQL: its entry carries the last sighting, and the store
 * learns it <em>behind</em>, in one batch a flush interval ({@link SightingRecords#recordSightings}),
 * and at shutdown (a sighting the store answers, at once). So a cache that was flushed or evicted the id, a node that never saw it, and {@code cache.mode=none}
 * (every sighting written at once) all read the last sighting from the store. When the cache is each node's own
 * ({@code local} mode on several nodes), an entry is trusted for its bound only, after which the store
 * answers again with what every node recorded: that bounds by how much two nodes' "last seen" can differ.
 */
final class Sightings {

    private static final Logger LOG = Logger.getLogger(Sightings.class.getName());
    /** The fingerprint of a sighting's record: every sighting of an id is the same request. */
    static final String FINGERPRINT = "seen";
    private static final byte[] NOT_NOTED = {0};
    private static final byte[] NOTED = {1};

    private final IdempotencyEngine engine;
    /** Sightings answered from the cache that the store has not recorded yet: the latest per id. */
    private final ConcurrentHashMap<ScopedKey, Instant> behind = new ConcurrentHashMap<>();
    private volatile boolean writeBehind;
    private volatile Duration cachedAtMost;
    private volatile ScheduledFuture<?> flushes;
    private volatile boolean unsupported;

    Sightings(IdempotencyEngine engine) {
        this.engine = engine;
    }

    /** See {@link IdempotencyEngine#recordSightingsWith}. */
    synchronized void start(ScheduledExecutorService scheduler, Duration flushEvery, Duration cachedAtMost) {
        if (flushes != null) {
            flushes.cancel(false);
            flushes = null;
        }
        this.cachedAtMost = cachedAtMost;
        if (scheduler == null) {
            writeBehind = false;
            flush();
            return;
        }
        writeBehind = true;
        long every = Math.max(1, flushEvery.toMillis());
        flushes = scheduler.scheduleWithFixedDelay(this::flushQuietly, every, every, TimeUnit.MILLISECONDS);
    }

    Sighting sight(ScopedKey id, String requestType, Policy policy) {
        long started = System.nanoTime();
        Instant now = engine.clock().instant();
        IdempotencyRecord cached = engine.cachedFinished(id);
        if (cached != null) {
            remember(cached.toBuilder().lastSeen(now).build());
            later(id, now);
            engine.observer().replayed(id, Duration.ofNanos(System.nanoTime() - started), true);
            return new Sighting(true, Optional.of(cached.lastSeen()), true, noted(cached));
        }
        Seen seen = engine.calls().call(id, "Could not record a sighting of the ", () -> {
            Claim claim = engine.store().claim(new ClaimRequest(id, FINGERPRINT, requestType, engine.nodeId(), now,
                    now.plus(policy.lease()), now.plus(policy.ttl())));
            if (claim instanceof Claim.Acquired acquired) {
                engine.store().complete(acquired.ticket(), new Completion(RecordStatus.COMPLETED, NOT_NOTED, now, false));
                return new Seen(acquired.ticket().finished(RecordStatus.COMPLETED, NOT_NOTED, now), false, null);
            }
            IdempotencyRecord existing = ((Claim.Existing) claim).record();
            Instant pending = behind.get(id);
            Instant before = pending != null && pending.isAfter(existing.lastSeen()) ? pending : existing.lastSeen();
            // Recorded at once: a sighting the store answers is one the cache did not (a miss, a cache that does not
            // take it just after a flush), so no node's cache carries it either; behind, another node reading the store
            // within the flush interval would miss it.
            try {
                record(Map.of(id, now));
            } catch (RuntimeException e) {
                // the sighting was answered; its "seen now" goes behind, as a cached one does (counted once, in record)
                LOG.log(Level.FINE, "Could not record a sighting at once; it goes with the next batch", e);
                later(id, now);
            }
            return new Seen(existing.toBuilder().lastSeen(now).response(NOT_NOTED).build(), true, before);
        });
        IdempotencyRecord known = seen.known();
        boolean seenBefore = seen.before();
        Instant lastSeen = seen.lastSeen();
        if (known.isFinished()) { // a first sighting that another node has claimed and not finished yet: not cached
            remember(known);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        if (seenBefore) {
            engine.observer().replayed(id, took, false);
        } else {
            engine.observer().executed(id, took, false);
        }
        return new Sighting(seenBefore, Optional.ofNullable(lastSeen), false, false);
    }

    /** What the store said of a sighting: the id's record as now known, whether it was seen before, and when last. */
    private record Seen(IdempotencyRecord known, boolean before, Instant lastSeen) {
    }

    /** Notes on the id's cached sighting what the door wants to remember with it (a response is stored). */
    void note(ScopedKey id) {
        IdempotencyRecord cached = engine.cachedFinished(id);
        if (cached != null && !noted(cached)) {
            remember(cached.toBuilder().response(NOTED).build());
        }
    }

    private static boolean noted(IdempotencyRecord sighting) {
        return sighting.response() != null && sighting.response().length == 1 && sighting.response()[0] == 1;
    }

    private void remember(IdempotencyRecord sighting) {
        try {
            engine.cache().put(sighting, cachedAtMost);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not cache a sighting of the " + sighting.scopedKey() + "; the store answers the next one", e);
        }
    }

    private void later(ScopedKey id, Instant at) {
        if (writeBehind) {
            behind.merge(id, at, (a, b) -> a.isAfter(b) ? a : b);
        } else {
            record(Map.of(id, at));
        }
    }

    /** Writes every sighting the store has not recorded yet; those written leave the queue unless a later one came. */
    void flush() {
        if (behind.isEmpty()) {
            return;
        }
        Map<ScopedKey, Instant> batch = new HashMap<>(behind);
        record(batch);
        batch.forEach(behind::remove); // remove(key, value): a later sighting stays for the next flush
    }

    private void flushQuietly() {
        try {
            flush();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not record the last sightings; trying again at the next flush", e);
        }
    }

    private void record(Map<ScopedKey, Instant> sightings) {
        if (unsupported) {
            return;
        }
        if (!(engine.store() instanceof SightingRecords records)) {
            unsupported = true;
            LOG.log(Level.WARNING, "The store {0} does not implement dev.idempotency.spi.SightingRecords:"
                    + " IdempotencyManager.check''s \"last seen\" is kept in the cache only", engine.store().getClass().getName());
            return;
        }
        try {
            records.recordSightings(sightings);
        } catch (RuntimeException e) {
            sightings.keySet().stream().map(ScopedKey::namespace).distinct().forEach(n -> engine.observer().storeError(n, e));
            throw e;
        }
    }

    /** Sightings not yet written to the store, for tests. */
    int behind() {
        return behind.size();
    }
}
