package dev.idempotency;

/**
 * How a call claims its key. See {@link Idempotent#claim()}, and the guide's Claims page (docs/claims.adoc).
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
    LEASED,
    /**
     * Nothing is written before the operation runs; when it has run, its finished result is inserted in the same
     * transaction (the caller's, or one the library begins around the call) and commits with the work: one write per
     * first request. Concurrent duplicates are held off before they run by an in-progress marker (this node's, and the
     * clustered or remote cache's across nodes); where two calls ran anyway, the database's unique key lets only the
     * first commit, and the other's transaction, its work with it, rolls back. Needs a JTA transaction manager, like
     * {@link #ATOMIC}. Effects outside the transaction (an e-mail, a call to another service) can run twice when markers
     * cannot see each other (nodes without a shared cache, a marker lost with a cache node).
     */
    OPTIMISTIC
}
