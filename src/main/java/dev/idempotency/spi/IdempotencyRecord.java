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

    /**
     * Checks that the fields every record needs are present.
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
     * @throws NullPointerException when {@code scopedKey}, {@code status}, {@code fingerprint} or {@code expiresAt}
     *                              is {@code null}
     */
    public IdempotencyRecord {
        Objects.requireNonNull(scopedKey, "scopedKey");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }

    /**
     * Finished: completed or failed.
     *
     * @return whether the status is other than {@link RecordStatus#IN_PROGRESS}
     */
    public boolean isFinished() {
        return status != RecordStatus.IN_PROGRESS;
    }

    /**
     * Past its time to live: treated as absent.
     *
     * @param now the instant to compare {@link #expiresAt()} with
     * @return whether {@code now} is at or after {@link #expiresAt()}
     */
    public boolean isExpired(Instant now) {
        return !now.isBefore(expiresAt);
    }

    /**
     * Released by its owner (the operation failed): free to claim, whatever the fingerprint.
     *
     * @return whether the record is in progress with no owner
     */
    public boolean isReleased() {
        return status == RecordStatus.IN_PROGRESS && owner == null;
    }

    /**
     * In progress and its owner's lease has run out: the owner is presumed dead.
     *
     * @param now the instant to compare {@link #leaseUntil()} with
     * @return whether the record is in progress and has no lease or {@code now} is at or after its end
     */
    public boolean isLeaseExpired(Instant now) {
        return status == RecordStatus.IN_PROGRESS && (leaseUntil == null || !now.isBefore(leaseUntil));
    }

    /**
     * Whether this record's claim generation is the ticket's.
     *
     * @param ticket the claim's ticket
     * @return whether the record is in progress with the ticket's owner and version
     */
    public boolean isHeldBy(Ticket ticket) {
        return status == RecordStatus.IN_PROGRESS && ticket.owner().equals(owner) && version == ticket.version();
    }

    /**
     * A record of this key, built by name; {@code build()} checks what every record needs.
     *
     * @param scopedKey the record's scope and key
     * @return a new builder for a record of {@code scopedKey}
     */
    public static Builder of(ScopedKey scopedKey) {
        return new Builder(scopedKey);
    }

    /**
     * This record with some fields changed: {@code r.toBuilder().leaseUntil(t).build()}.
     *
     * @return a new builder holding every field of this record
     */
    public Builder toBuilder() {
        return new Builder(scopedKey).status(status).fingerprint(fingerprint).response(response).requestType(requestType)
                .attempts(attempts).firstSeen(firstSeen).lastSeen(lastSeen).completedAt(completedAt).expiresAt(expiresAt)
                .leaseUntil(leaseUntil).owner(owner).version(version);
    }

    /**
     * The record as it is once its claim finished: the outcome stored, the lease gone, owner and version kept.
     *
     * @param outcome the finished status
     * @param stored  the stored response, opaque to the store
     * @param at      when the claim finished: the new {@code lastSeen} and {@code completedAt}
     * @return a new record; this one is unchanged
     */
    public IdempotencyRecord finished(RecordStatus outcome, byte[] stored, Instant at) {
        return toBuilder().status(outcome).response(stored).lastSeen(at).completedAt(at).leaseUntil(null).build();
    }

    /**
     * The record as it is once released: in progress with no owner (the key is free), no response.
     *
     * @param at when the record was released: the new {@code lastSeen} and {@code leaseUntil}
     * @return a new record; this one is unchanged
     */
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

        /**
         * Sets the {@code status} component.
         *
         * @param status the record's state
         * @return this builder
         */
        public Builder status(RecordStatus status) {
            this.status = status;
            return this;
        }

        /**
         * Sets the {@code fingerprint} component.
         *
         * @param fingerprint the SHA-256 (hex) of what makes the request this request
         * @return this builder
         */
        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        /**
         * Sets the {@code response} component.
         *
         * @param response the stored response, opaque to the store; {@code null} while in progress
         * @return this builder
         */
        public Builder response(byte[] response) {
            this.response = response;
            return this;
        }

        /**
         * Sets the {@code requestType} component.
         *
         * @param requestType the request type, {@code null} when none
         * @return this builder
         */
        public Builder requestType(String requestType) {
            this.requestType = requestType;
            return this;
        }

        /**
         * Sets the {@code attempts} component.
         *
         * @param attempts how many times the operation was started under this key
         * @return this builder
         */
        public Builder attempts(int attempts) {
            this.attempts = attempts;
            return this;
        }

        /**
         * Sets the {@code firstSeen} component.
         *
         * @param firstSeen when the key was first claimed
         * @return this builder
         */
        public Builder firstSeen(Instant firstSeen) {
            this.firstSeen = firstSeen;
            return this;
        }

        /**
         * Sets the {@code lastSeen} component.
         *
         * @param lastSeen when the key was last seen
         * @return this builder
         */
        public Builder lastSeen(Instant lastSeen) {
            this.lastSeen = lastSeen;
            return this;
        }

        /**
         * Sets the {@code completedAt} component.
         *
         * @param completedAt when the response was stored, {@code null} while in progress
         * @return this builder
         */
        public Builder completedAt(Instant completedAt) {
            this.completedAt = completedAt;
            return this;
        }

        /**
         * Sets the {@code expiresAt} component.
         *
         * @param expiresAt after this instant the record counts as absent
         * @return this builder
         */
        public Builder expiresAt(Instant expiresAt) {
            this.expiresAt = expiresAt;
            return this;
        }

        /**
         * Sets the {@code leaseUntil} component.
         *
         * @param leaseUntil the end of the owner's lease while in progress
         * @return this builder
         */
        public Builder leaseUntil(Instant leaseUntil) {
            this.leaseUntil = leaseUntil;
            return this;
        }

        /**
         * Sets the {@code owner} component.
         *
         * @param owner the node holding the lease; {@code null} once released
         * @return this builder
         */
        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        /**
         * Sets the {@code version} component.
         *
         * @param version the claim generation
         * @return this builder
         */
        public Builder version(long version) {
            this.version = version;
            return this;
        }

        /**
         * Builds the record.
         *
         * @return a new record of the fields set so far
         * @throws NullPointerException when the scoped key, status, fingerprint or expiry is {@code null}
         */
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
