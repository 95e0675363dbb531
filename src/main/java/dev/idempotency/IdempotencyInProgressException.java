package dev.idempotency;

import java.time.Duration;

/**
 * A call with the same key is still running (on this node or another). Nothing ran; retry after
 * {@link #retryAfter()}.
 */
public class IdempotencyInProgressException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /** When to try again (see {@link #retryAfter()}). */
    private final Duration retryAfter;

    /**
     * An exception with a message and the time after which to try again.
     *
     * @param message    what went wrong, naming the key concerned
     * @param retryAfter when to try again
     */
    public IdempotencyInProgressException(String message, Duration retryAfter) {
        super(message);
        this.retryAfter = retryAfter;
    }

    /**
     * When to try again: the rest of the first call's lease, in whole seconds, at least 1 and at most 5.
     *
     * @return the time after which a retry may find the first call finished
     */
    public Duration retryAfter() {
        return retryAfter;
    }
}
