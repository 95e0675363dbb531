package dev.idempotency.events;

import java.time.Instant;

/**
 * A response was stored through {@code IdempotencyManager.store}: fired once per stored response, on the node
 * that stored it (a listener registered with {@code addListener} is called on whichever node it was registered).
 * {@code key} is the primary id; {@code secondaryId} may be {@code null}.
 */
public record ResponseStored(String namespace, String principal, String key, Instant at, String secondaryId,
                             String requestType) implements IdempotencyEvent {
}
