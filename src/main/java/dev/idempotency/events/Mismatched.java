package dev.idempotency.events;

import java.time.Instant;

/** A key was reused with a different request (another fingerprint); nothing ran. */
public record Mismatched(String namespace, String principal, String key, Instant at) implements IdempotencyEvent {
}
