package dev.idempotency.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * One record per scoped key, as a store keeps it. Immutable snapshot.
 *
 * @param scopedKey   scope and key
 * @param status      state
 * @param fingerprint SHA-256 (hex) of what makes the request this request
 * @param response    the stored response, opaque to the store; {@code null} while in progress
 * @param requestType optional request type, {@code null} when none
 * @param attempts    how many times the operation was started under this key
 * @param firstSeen   when the key was first claimed
 * @param lastSeen    when the key was last seen
 * @param completedAt when the response was stored, {@code null} while in progress
 * @param expiresAt   after this instant the record counts as absent
 * @param leaseUntil  while in progress, the owner's lease; a record past its lease may be taken over
 * @param owner       the node holding the lease; {@code null} once released (then the key is free)
 * @param version     the claim generation: raised by every claim and take-over; fences completions
 */
public record IdempotencyRecord(
        ScopedKey scopedKey,
        RecordStatus status,
        String fingerprint,
        byte[] response,
        String requestType,
        int attempts,
        Instant firstSeen,
        Instant lastSeen,
        Instant completedAt,
        Instant expiresAt,
        Instant leaseUntil,
        String owner,
        long version) {

    public IdempotencyRecord {
        Objects.requireNonNull(scopedKey, "scopedKey");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }

    /** Finished: completed or failed. */
    public boolean isFinished() {
        return status != RecordStatus.IN_PROGRESS;
    }

    /** Past its time to live: treated as absent. */
    public boolean isExpired(Instant now) {
        return !now.isBefore(expiresAt);
    }

    /** Released by its owner (the operation failed): free to claim, whatever the fingerprint. */
    public boolean isReleased() {
        return status == RecordStatus.IN_PROGRESS && owner == null;
    }

    /** In progress and its owner's lease has run out: the owner is presumed dead. */
    public boolean isLeaseExpired(Instant now) {
        return status == RecordStatus.IN_PROGRESS && (leaseUntil == null || !now.isBefore(leaseUntil));
    }

    /** Whether this record's claim generation is the ticket's. */
    public boolean isHeldBy(Ticket ticket) {
        return status == RecordStatus.IN_PROGRESS && ticket.owner().equals(owner) && version == ticket.version();
    }

    @Override
    public String toString() {
        return "IdempotencyRecord[" + scopedKey + ", " + status + ", version " + version + "]";
    }
}
