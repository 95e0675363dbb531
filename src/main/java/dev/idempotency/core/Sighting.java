package dev.idempotency.core;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link IdempotencyEngine#sight} found for an id.
 *
 * @param seenBefore whether the id had been seen before this sighting (by any node)
 * @param lastSeen   when it was last seen before this sighting; empty for a first sighting
 * @param fromCache  whether the cache answered (no store was asked)
 * @param noted      whether a door {@linkplain IdempotencyEngine#noteSighting noted} the id, as the cache
 *                   remembers it; only meaningful {@code fromCache}
 */
public record Sighting(boolean seenBefore, Optional<Instant> lastSeen, boolean fromCache, boolean noted) {
}
