package dev.idempotency;

/**
 * How a call claims its key (SPEC section 2a). See {@link Idempotent#claim()}.
 */
public enum ClaimMode {
    /**
     * Defer to configuration ({@code idempotency.claim}, default {@code auto}): {@link #ATOMIC} where a JTA
     * transaction manager and a transactional store are present and the method does not return a
     * {@code CompletionStage}, else {@link #LEASED}.
     */
    DEFAULT,
    /**
     * The claim row, the operation's transactional work and the stored result commit in one transaction: the
     * caller's, or one the library begins around the call. A rollback or a crash before the commit leaves no
     * trace, so a retry runs at once; a concurrent duplicate waits for that commit (or is told the call is in
     * progress) and then replays.
     */
    ATOMIC,
    /**
     * The claim commits on its own before the operation runs and holds the key for a lease; the result is
     * stored when the operation returns. For long external calls that should show "in progress" without
     * holding a transaction, and for Java SE without a transaction manager.
     */
    LEASED
}
