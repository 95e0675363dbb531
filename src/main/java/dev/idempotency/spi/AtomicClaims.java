package dev.idempotency.spi;

import dev.idempotency.IdempotencyStoreException;

import java.time.Duration;

/**
 * An optional capability of a transactional store: claims written inside the caller's active transaction (the atomic
 * claim; see the guide's Claims page, docs/claims.adoc). The claim row, the operation's work and the completion
 * ({@link IdempotencyStore#complete} with {@link Completion#joinTransaction()}) then commit together, once; a rollback
 * or a crash before that commit leaves no trace. A store without it gets leased claims only.
 */
public interface AtomicClaims {

    /**
     * Claims the key inside the calling thread's active transaction, without committing. The database makes a
     * concurrent claim of the same key wait for this transaction's outcome; this claim waits for another
     * transaction's uncommitted claim at most {@code lockWait} (zero: not at all).
     *
     * @param request  the scoped key, fingerprint, owner and times of the claim
     * @param lockWait how long to wait for another transaction's uncommitted claim of the key
     * @return {@link Claim.Acquired} (a new row, or an expired or released one claimed again),
     *         {@link Claim.Existing} (a committed live record: finished, or leased and in progress), or
     *         {@link Claim.Busy} (another transaction holds the key; the caller's transaction is to roll back)
     * @throws IdempotencyStoreException the store failed
     */
    Claim claimInTransaction(ClaimRequest request, Duration lockWait);

    /**
     * The optimistic claim: writes the finished record of a call whose work has already run in the caller's active
     * transaction, inside that transaction, without committing; the record then commits with the work, once. The
     * database's unique key judges: a committed live record of the key, or one committed by another transaction while
     * this one waited for it, means this call lost, and its transaction is to roll back. A store that cannot write it
     * in one statement claims ({@link #claimInTransaction}) and then completes ({@link IdempotencyStore#complete}) in the
     * same transaction: the default.
     *
     * @param request    the scoped key, fingerprint, owner and times of the claim
     * @param completion the call's outcome: its status and stored response
     * @param lockWait   how long to wait for another transaction's uncommitted row of the key
     * @return {@link Claim.Acquired} (the finished record is written), {@link Claim.Existing} (a committed live record
     *         holds the key: the caller's transaction is to roll back), or {@link Claim.Busy} (another transaction
     *         holds the key; the caller's transaction is to roll back)
     * @throws IdempotencyStoreException the store failed
     */
    default Claim claimFinishedInTransaction(ClaimRequest request, Completion completion, Duration lockWait) {
        Claim claim = claimInTransaction(request, lockWait);
        if (claim instanceof Claim.Acquired acquired) {
            if (!(this instanceof IdempotencyStore store)) {
                throw new IllegalStateException(getClass().getName() + " claims in transactions but is not an IdempotencyStore");
            }
            store.complete(acquired.ticket(), new Completion(completion.status(), completion.response(), completion.now(), true));
        }
        return claim;
    }

    /**
     * Removes, inside the caller's active transaction, the row an atomic claim wrote: for an outcome not to
     * keep in a transaction that may still commit (a checked exception the caller catches).
     *
     * @param ticket the atomic claim's ticket
     */
    void unclaimInTransaction(Ticket ticket);

    /**
     * Whether the calling thread has a transaction that {@link #claimInTransaction} can join right now.
     *
     * @return whether an atomic claim is possible on the calling thread
     */
    boolean canJoin();

    /**
     * Whether a transaction failed because another transaction's commit conflicted with it: a serialization failure
     * or a deadlock victim, and on a multi-primary database (MariaDB Galera) a certification failure at commit, where
     * the first of two nodes to commit the same key wins. The caller then asks the store whether another call
     * committed the key (a replay) before it reports the failure. {@code false} by default.
     *
     * @param failure the transaction's failure
     * @return whether the failure is a conflict with another transaction's commit
     */
    default boolean lostToAnotherCommit(Throwable failure) {
        return false;
    }
}
