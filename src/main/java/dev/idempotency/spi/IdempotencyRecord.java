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

    /** A record of this key, built by name; {@code build()} checks what every record needs. */
    public static Builder of(ScopedKey scopedKey) {
        return new Builder(scopedKey);
    }

    /** This record with some fields changed: {@code r.toBuilder().leaseUntil(t).build()}. */
    public Builder toBuilder() {
        return new Builder(scopedKey).status(status).fingerprint(fingerprint).response(response).requestType(requestType)
                .attempts(attempts).firstSeen(firstSeen).lastSeen(lastSeen).completedAt(completedAt).expiresAt(expiresAt)
                .leaseUntil(leaseUntil).owner(owner).version(version);
    }

    /** The record as it is once its claim finished: the outcome stored, the lease gone, owner and version kept. */
    public IdempotencyRecord finished(RecordStatus outcome, byte[] stored, Instant at) {
        return toBuilder().status(outcome).response(stored).lastSeen(at).completedAt(at).leaseUntil(null).build();
    }

    /** The record as it is once released: in progress with no owner (the key is free), no response. */
    public IdempotencyRecord released(Instant at) {
        return toBuilder().status(RecordStatus.IN_PROGRESS).response(null).lastSeen(at).completedAt(null)
                .leaseUntil(at).owner(null).build();
    }

    /** Builds records by name, not by position. Not thread-safe. */
    public static final class Builder {
        private final ScopedKey scopedKey;
        private RecordStatus status;
        private String fingerprint;
        private byte[] response;
        private String requestType;
        private int attempts;
        private Instant firstSeen;
        private Instant lastSeen;
        private Instant completedAt;
        private Instant expiresAt;
        private Instant leaseUntil;
        private String owner;
        private long version;

        private Builder(ScopedKey scopedKey) {
            this.scopedKey = scopedKey;
        }

        public Builder status(RecordStatus status) {
            this.status = status;
            return this;
        }

        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        public Builder response(byte[] response) {
            this.response = response;
            return this;
        }

        public Builder requestType(String requestType) {
            this.requestType = requestType;
            return this;
        }

        public Builder attempts(int attempts) {
            this.attempts = attempts;
            return this;
        }

        public Builder firstSeen(Instant firstSeen) {
            this.firstSeen = firstSeen;
            return this;
        }

        public Builder lastSeen(Instant lastSeen) {
            this.lastSeen = lastSeen;
            return this;
        }

        public Builder completedAt(Instant completedAt) {
            this.completedAt = completedAt;
            return this;
        }

        public Builder expiresAt(Instant expiresAt) {
            this.expiresAt = expiresAt;
            return this;
        }

        public Builder leaseUntil(Instant leaseUntil) {
            this.leaseUntil = leaseUntil;
            return this;
        }

        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        public Builder version(long version) {
            this.version = version;
            return this;
        }

        public IdempotencyRecord build() {
            return new IdempotencyRecord(scopedKey, status, fingerprint, response, requestType, attempts, firstSeen,
                    lastSeen, completedAt, expiresAt, leaseUntil, owner, version);
        }
    }

    @Override
    public String toString() {
        return "IdempotencyRecord[" + scopedKey + ", " + status + ", version " + version + "]";
    }
}
