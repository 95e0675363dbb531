package dev.idempotency.spi;

/** The answer of {@link IdempotencyStore#claim}: the key is ours now, or a live record already holds it. */
public sealed interface Claim {

    /** The key is claimed for the caller (a new record, a released one, or a take-over of an expired lease). */
    record Acquired(Ticket ticket) implements Claim {
    }

    /** A live record holds the key: finished, in progress under a live lease, or held for another request. */
    record Existing(IdempotencyRecord record) implements Claim {
    }

    /**
     * Atomic claims only ({@link AtomicClaims}): another transaction's claim of the key has not committed yet
     * and the claim statement stopped waiting for it ({@code settled = false}: its lock wait timed out), or it
     * has just committed and this claim's statement failed on it ({@code settled = true}: a new transaction
     * will find its row). Either way the caller's transaction may no longer be usable: it is to be rolled back.
     */
    record Busy(boolean settled) implements Claim {
    }
}
