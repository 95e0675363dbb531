package dev.idempotency.events;

import java.time.Instant;

/** A duplicate arrived while the first request with its key was still running, and was turned away. */
public record Conflicted(String namespace, String principal, String key, Instant at) implements IdempotencyEvent {
}
