package dev.idempotency.spi;

import java.time.Instant;
import java.util.Map;

/**
 * An optional capability of a store: it records when ids were last seen ({@code IdempotencyManager.check}'s "last
 * seen"), so that every node and every cache mode read the same time. A store without it serves everything
 * else, and "last seen" then lives in the cache only.
 */
public interface SightingRecords {

    /**
     * In a transaction of its own: for each key that has a record, {@code lastSeen} becomes the given time unless it is
     * later already; nothing else changes (status, owner, version, expiry), and a key without a record is skipped.
     *
     * @param lastSeen the time each key was last seen
     */
    void recordSightings(Map<ScopedKey, Instant> lastSeen);
}
