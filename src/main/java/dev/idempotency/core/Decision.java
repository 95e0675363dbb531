package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.Ticket;

/** What {@link IdempotencyEngine#begin} decided: run the operation, or replay a finished record. */
public sealed interface Decision {

    /** The key is this caller's: run the operation, then complete, fail or release the ticket. */
    record Proceed(Ticket ticket) implements Decision {
    }

    /** A finished record with the same fingerprint: answer with it; the operation does not run. */
    record Replay(IdempotencyRecord record) implements Decision {
    }

    /**
     * Atomic claims ({@link IdempotencyEngine#beginAtomic}): the key is claimed in an open transaction; run the
     * operation, then {@link IdempotencyEngine#completeAtomic} or {@link IdempotencyEngine#abortAtomic}.
     */
    record Held(AtomicHold hold) implements Decision {
    }
}
