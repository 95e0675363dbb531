package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.Ticket;

/**
 * A key claimed by a door ({@link ClaimFlow#hold}): the door runs the work, then settles the claim once, on the
 * thread that claimed it, by one of {@link #complete} and {@link #giveUp}.
 */
public interface Claimed {

    /** The claim. */
    Ticket ticket();

    /**
     * Keeps the answer, replayed to every retry.
     *
     * @return whether it is kept; {@code false} when the work's transaction was marked for rollback, so that nothing of
     *         the call is kept and the door answers as the work did
     * @throws AnsweredFirst                 another call stored the key's answer first: nothing of this call is kept,
     *                                        and the door answers with the other's (the first answer)
     * @throws dev.idempotency.IdempotencyKeyReusedException another request with the key stored its answer first:
     *                                        nothing of this call is kept
     * @throws IdempotencyInProgressException the commit lost to another that committed the key first: nothing of this
     *                                        call is kept, a retry replays the other's
     * @throws IdempotencyStoreException      the answer could not be kept; when {@link ClaimFlow#workCommitsWithAnswer()},
     *                                        nothing of the call is kept either
     */
    boolean complete(byte[] response);

    /** Keeps nothing of the call: the key is free for the retry. */
    void giveUp();
}
