package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.ScopedKey;

/**
 * How one method's calls claim their keys, atomic or leased: chosen once, when the application starts
 * ({@link IdempotencyEngine#flow}); a door runs its calls through it and never asks which it is.
 */
public interface ClaimFlow {

    /**
     * Runs a call under the key's claim, or answers with the finished record without running it.
     *
     * @throws IdempotencyKeyReusedException  the key belongs to another request
     * @throws IdempotencyInProgressException another call holds the key
     * @throws IdempotencyStoreException      the store failed; the call did not run, or (atomic and optimistic, in a
     *                                        transaction of the library's) its commit lost the database's connection and
     *                                        may or may not have taken place: the retry finds out
     * @throws Exception                      what the call threw
     */
    <R> AtomicOutcome<R> run(ScopedKey key, String fingerprint, String requestType, Policy policy, AtomicCall<R> call)
            throws Exception;

    /**
     * Claims the key for work that a door finishes on this thread in a later step (HTTP: the resource method, then the
     * writing of its response): {@link Decision.Held} with the {@link Claimed} handle to settle, or
     * {@link Decision.Replay} of a finished record.
     *
     * @throws IdempotencyKeyReusedException  the key belongs to another request
     * @throws IdempotencyInProgressException another call holds the key
     * @throws IdempotencyStoreException      the store failed; nothing is held
     */
    Decision hold(ScopedKey key, String fingerprint, String requestType, Policy policy);

    /** Whether the work's own transactional effects commit together with its answer (the atomic claim). */
    boolean workCommitsWithAnswer();
}
