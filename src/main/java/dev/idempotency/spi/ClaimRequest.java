package dev.idempotency.spi;

import java.time.Instant;

/**
 * What a store needs to claim a key.
 *
 * @param scopedKey   scope and key
 * @param fingerprint the request's fingerprint (hex)
 * @param requestType optional request type, or {@code null}
 * @param owner       the claiming node's id
 * @param now         the engine's clock reading
 * @param leaseUntil  the lease to grant
 * @param expiresAt   the time to live of a new record
 */
public record ClaimRequest(ScopedKey scopedKey, String fingerprint, String requestType, String owner,
                           Instant now, Instant leaseUntil, Instant expiresAt) {
}
