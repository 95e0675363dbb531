package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import java.time.Duration;

import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Every call of the engine into the store goes through here: a failure is counted for the key's namespace, logged, and
 * thrown as {@link IdempotencyStoreException} (the library's own exceptions pass as they are).
 */
final class StoreCalls {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final IdempotencyStore store;
    private final TransactionBridge transactions;
    private final Supplier<EngineObserver> observer;

    StoreCalls(IdempotencyStore store, TransactionBridge transactions, Supplier<EngineObserver> observer) {
        this.store = store;
        this.transactions = transactions;
        this.observer = observer;
    }

    /** A claim in the store's own transaction (leased). */
    Claim claim(ClaimRequest request) {
        return claim(request, () -> store.claim(request));
    }

    /** A claim, however the store takes it. */
    Claim claim(ClaimRequest request, Supplier<Claim> claim) {
        return call(request.scopedKey(), "Could not claim the ", claim);
    }

    /**
     * Writes a claim's outcome, timed and counted.
     *
     * @param joined whether it is written in the caller's transaction, which a lost lease then marks for rollback
     * @throws IdempotencyLeaseLostException the claim was taken over
     */
    void finish(Ticket ticket, Completion completion, boolean joined) {
        long started = System.nanoTime();
        try {
            run(ticket.scopedKey(), "Could not store the outcome of the ", () -> store.complete(ticket, completion));
        } catch (IdempotencyLeaseLostException e) {
            if (joined) {
                transactions.setRollbackOnly();
            }
            LOG.log(Level.WARNING, "Refused the completion of {0}: its lease was taken over", ticket.scopedKey());
            throw e;
        }
        observer.get().completed(ticket.scopedKey(), Duration.ofNanos(System.nanoTime() - started),
                completion.status() == RecordStatus.FAILED);
    }

    /**
     * @param key     whose namespace a failure is counted for
     * @param failure the start of the message a failure becomes ("Could not claim the "), which the key ends: built only
     *                then, not on every call
     */
    <T> T call(ScopedKey key, String failure, Supplier<T> call) {
        try {
            return call.get();
        } catch (IdempotencyException e) {
            if (e instanceof IdempotencyStoreException) {
                failed(key, e);
            }
            throw e;
        } catch (RuntimeException e) {
            failed(key, e);
            throw new IdempotencyStoreException(failure + key, e);
        }
    }

    /** {@link #call} for work with no result. */
    void run(ScopedKey key, String failure, Runnable work) {
        call(key, failure, () -> {
            work.run();
            return null;
        });
    }

    /** Counts a failure of the store that was handled elsewhere. */
    void failed(ScopedKey key, RuntimeException e) {
        observer.get().storeError(key.namespace(), e);
        LOG.log(Level.WARNING, "The store failed for the {0}: {1}", new Object[] {key, e.toString()});
    }
}
