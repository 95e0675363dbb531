package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.Ticket;

import java.util.concurrent.atomic.AtomicReference;

/**
 * An atomic claim held in an open transaction ({@link IdempotencyEngine#beginAtomic}): the door runs the
 * operation, then completes or aborts it on the same thread.
 */
public final class AtomicHold {

    private final Ticket ticket;
    final TransactionBridge.Begun begun;
    final boolean joined;
    final AtomicReference<IdempotencyRecord> completed = new AtomicReference<>();
    final AtomicReference<byte[]> keptFailure = new AtomicReference<>();

    AtomicHold(Ticket ticket, TransactionBridge.Begun begun, boolean joined) {
        this.ticket = ticket;
        this.begun = begun;
        this.joined = joined;
    }

    /** The claim. */
    public Ticket ticket() {
        return ticket;
    }
}
