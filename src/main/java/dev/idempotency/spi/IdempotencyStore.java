package dev.idempotency.spi;

import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;

import java.time.Instant;
import java.util.Optional;

/**
 * Where records live: the only judge of whether a key is new. A CDI bean of this type in the application
 * replaces the library's JPA store.
 *
 * <p>Every method is thread-safe and atomic per key, across every node that shares the store. Failures
 * are {@link IdempotencyStoreException}. Stores judge existing records with {@link ClaimRules}.
 *
 * <p>Optional capabilities are interfaces of their own: {@link AtomicClaims} (claims inside the caller's
 * transaction), {@link StoreManagement} (export, import and deletions for {@code IdempotencyManager}) and
 * {@link SightingRecords} ({@code IdempotencyManager.check}'s "last seen").
 */
public interface IdempotencyStore {

    /**
     * Claims the key, in a transaction of its own that is committed before this returns (so every node
     * sees the claim at once). When no live record exists (none, expired, or released) a fresh
     * {@code IN_PROGRESS} record is written; when the record is in progress past its lease with the same
     * fingerprint it is taken over; otherwise the existing record is returned untouched.
     *
     * @param request the scoped key, fingerprint, owner and times of the claim
     * @return {@link Claim.Acquired} with the new claim's ticket, or {@link Claim.Existing} with the live record
     */
    Claim claim(ClaimRequest request);

    /**
     * Writes the final state, fenced: only while the record is still held by the ticket (same owner and
     * version, still in progress). When {@link Completion#joinTransaction()} is set and the caller has an
     * active transaction the store can join, the write is part of that transaction.
     *
     * @param ticket     the claim's owner and version
     * @param completion the final status and response
     * @throws IdempotencyLeaseLostException when the fence does not match: the claim was lost
     */
    void complete(Ticket ticket, Completion completion);

    /**
     * Frees the key so that the next claim runs the operation again, in a transaction of its own; fenced by
     * owner and version only (whatever the status), so that a completion undone by a rolled back business
     * transaction is released too. Returns whether the record was released.
     *
     * @param ticket the claim's owner and version
     * @param now    the time of the release
     * @return whether the record was released
     */
    boolean release(Ticket ticket, Instant now);

    /**
     * Renews the lease of a claim whose operation still runs, so that a live holder never loses its claim, in a
     * transaction of its own: sets {@code leaseUntil} when the record is still in progress and held by the ticket
     * (same owner and version), and returns whether it did. A store that cannot renew throws
     * {@link UnsupportedOperationException}; its leased calls must then finish within their lease.
     *
     * @param ticket     the claim's owner and version
     * @param leaseUntil the new end of the lease
     * @return whether the lease was renewed
     * @throws UnsupportedOperationException when the store cannot renew leases (the default)
     */
    default boolean renew(Ticket ticket, Instant leaseUntil) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot renew leases");
    }

    /**
     * The store's own time, the clock every node shares for leases and expiry, so that a node whose own clock is wrong
     * can neither take over a live claim nor expire a finished record early: a database's {@code CURRENT_TIMESTAMP}. A
     * store whose time is each node's own throws {@link UnsupportedOperationException} (the default); nodes then need
     * synchronised clocks.
     *
     * @return the store's current time
     * @throws UnsupportedOperationException when the store has no time of its own (the default)
     */
    default Instant currentTime() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot tell its time");
    }

    /**
     * The record for a key, expired or not; no lock is taken.
     *
     * @param scopedKey the record's scope and key
     * @return the record, or empty when the store has none for the key
     */
    Optional<IdempotencyRecord> find(ScopedKey scopedKey);

    /**
     * Deletes at most {@code max} records past their time to live (never one whose lease is still alive),
     * oldest first, and returns how many it deleted.
     *
     * @param now the instant against which expiry and leases are judged
     * @param max the most records to delete
     * @return how many records were deleted
     */
    int purgeExpired(Instant now, int max);
}
