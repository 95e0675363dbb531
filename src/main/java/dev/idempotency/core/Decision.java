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
     * {@link ClaimFlow#hold}: the key is claimed for this door, in an open transaction when the claim is atomic; run the
     * operation, then settle the claim once with {@link Claimed#complete} or {@link Claimed#giveUp}.
     */
    record Held(Claimed claimed) implements Decision {
    }
}
