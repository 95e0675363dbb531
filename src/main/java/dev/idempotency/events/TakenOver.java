package dev.idempotency.events;

import java.time.Instant;

/** A request took over a key whose holder's lease had expired (its node presumed dead); the operation runs again. */
public record TakenOver(String namespace, String principal, String key, Instant at) implements IdempotencyEvent {
}
