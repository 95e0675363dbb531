package dev.idempotency.events;

import java.time.Instant;

/**
 * A response was stored through {@code IdempotencyManager.store}, on this node or another; fired on every
 * node that sees it. {@code key} is the primary id; {@code secondaryId} may be {@code null}.
 */
public record ResponseStored(String namespace, String principal, String key, Instant at, String secondaryId,
                             String requestType) implements IdempotencyEvent {
}
