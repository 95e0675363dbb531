package dev.idempotency.spi;

/** The answer of {@link IdempotencyStore#claim}: the key is ours now, or a live record already holds it. */
public sealed interface Claim {

    /** The key is claimed for the caller (a new record, a released one, or a take-over of an expired lease). */
    record Acquired(Ticket ticket) implements Claim {
    }

    /** A live record holds the key: finished, in progress under a live lease, or held for another request. */
    record Existing(IdempotencyRecord record) implements Claim {
    }
}
