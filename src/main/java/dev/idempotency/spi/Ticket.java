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
 * @param fingerprint the claimed request's fingerprint
 * @param requestType the request type, or {@code null}
 * @param firstSeen  when the key was first claimed
 */
public record Ticket(ScopedKey scopedKey, String owner, long version, Instant leaseUntil, Instant expiresAt,
                     int attempts, boolean takeover, String fingerprint, String requestType, Instant firstSeen) {

    /**
     * The record as it is once this claim finished with the given outcome.
     *
     * @param status   the outcome: {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
     * @param response the stored response, opaque to the store
     * @param now      when the claim finished: the record's {@code lastSeen} and {@code completedAt}
     * @return the finished record, with this ticket's owner and version
     */
    public IdempotencyRecord finished(RecordStatus status, byte[] response, Instant now) {
        return IdempotencyRecord.of(scopedKey).status(status).fingerprint(fingerprint).response(response)
                .requestType(requestType).attempts(attempts).firstSeen(firstSeen).lastSeen(now).completedAt(now)
                .expiresAt(expiresAt).owner(owner).version(version).build();
    }
}
