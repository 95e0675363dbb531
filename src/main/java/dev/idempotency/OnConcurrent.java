package dev.idempotency;

/** What a duplicate does while the first call with its key is still running. */
public enum OnConcurrent {
    /** Defer to configuration ({@code idempotency.on-concurrent}, default {@link #REJECT}). */
    DEFAULT,
    /** Fail at once with {@link IdempotencyInProgressException}, which carries a retry-after. */
    REJECT,
    /** Wait for the first call's result, up to the wait timeout; then fail as {@link #REJECT} does. */
    WAIT
}
