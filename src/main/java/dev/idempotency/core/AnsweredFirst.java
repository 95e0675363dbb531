package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.spi.IdempotencyRecord;

/**
 * Thrown by {@link Claimed#complete} when another call of the key stored its answer first: nothing of this call is kept
 * (its transaction rolled back), and its caller is answered with the other's, {@link #record()}, as a replay. A door
 * that does not know it treats it as "in progress" (it is one), and the caller's retry replays the same answer.
 */
public final class AnsweredFirst extends IdempotencyInProgressException {
    private static final long serialVersionUID = 1L;

    private final transient IdempotencyRecord record;

    AnsweredFirst(IdempotencyRecord record) {
        super("Another call of the " + record.scopedKey() + " stored its answer first", Replies.MIN_RETRY_AFTER);
        this.record = record;
    }

    /** The finished record of the call that answered first. */
    public IdempotencyRecord record() {
        return record;
    }
}
