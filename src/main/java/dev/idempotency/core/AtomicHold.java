package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.Ticket;

import java.util.concurrent.atomic.AtomicReference;

/**
 * An atomic claim held in an open transaction ({@link ClaimFlow#hold}): the door runs the operation, then completes
 * or gives it up on the same thread.
 */
final class AtomicHold implements Claimed {

    private final Ticket ticket;
    final HeldTransaction transaction;
    private final AtomicFlow flow;
    final AtomicReference<IdempotencyRecord> completed = new AtomicReference<>();
    final AtomicReference<byte[]> keptFailure = new AtomicReference<>();
    /**
     * What storing the kept failure found once its transaction ended: acquired (stored), or another call's row of the
     * key that came first; {@code null} until then, or when the store could not be written (not known).
     */
    final AtomicReference<dev.idempotency.spi.Claim> failureDecided = new AtomicReference<>();

    /** Whether the method threw a failure to keep that was not stored, or not known to be: it may not be handed over. */
    boolean keptFailureNotStored() {
        return keptFailure.get() != null && !(failureDecided.get() instanceof dev.idempotency.spi.Claim.Acquired);
    }

    AtomicHold(Ticket ticket, HeldTransaction transaction, AtomicFlow flow) {
        this.ticket = ticket;
        this.transaction = transaction;
        this.flow = flow;
    }

    @Override
    public Ticket ticket() {
        return ticket;
    }

    /** Writes the answer into the transaction, and commits it when the door's to commit (see {@link HeldTransaction}). */
    @Override
    public boolean complete(byte[] response) {
        return flow.completeAtomic(this, response);
    }

    /** The transaction rolls back (the library's), or the claim row goes (the caller's). */
    @Override
    public void giveUp() {
        flow.abortAtomic(this);
    }
}
