package dev.idempotency.spi;

import java.time.Instant;

/**
 * Proof of a claim: the holder may complete or release the record while the record's owner and version
 * are still these (the fence).
 *
 * @param scopedKey  scope and key
 * @param owner      the claiming node
 * @param version    the claim generation
 * @param leaseUntil end of the lease granted
 * @param expiresAt  when the record will expire
 * @param attempts   the attempt number of this claim (1 for the first)
 * @param takeover   whether the claim took over an expired lease of another holder
 */
public record Ticket(ScopedKey scopedKey, String owner, long version, Instant leaseUntil, Instant expiresAt,
                     int attempts, boolean takeover) {
}
