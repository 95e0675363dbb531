package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;

/**
 * What {@link IdempotencyEngine#runAtomic} did: ran the operation (its result is returned as it is), or
 * replayed a finished record without running it.
 *
 * @param <R> the operation's result
 */
public sealed interface AtomicOutcome<R> {

    /** The operation ran in this call; its work and stored result commit with the transaction. */
    record Ran<R>(R value) implements AtomicOutcome<R> {
    }

    /** A finished record with the same fingerprint: the operation did not run. */
    record Replayed<R>(IdempotencyRecord record) implements AtomicOutcome<R> {
    }
}
