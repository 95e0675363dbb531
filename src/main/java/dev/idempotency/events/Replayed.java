package dev.idempotency.events;

import java.time.Instant;

/**
 * A duplicate was answered with the stored outcome; the operation did not run.
 *
 * @param fromCache whether the cache answered, with no store round trip
 */
public record Replayed(String namespace, String principal, String key, Instant at, boolean fromCache) implements IdempotencyEvent {
}
