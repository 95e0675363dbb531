package dev.idempotency;

import java.time.Duration;

/**
 * A call with the same key is still running (on this node or another). Nothing ran; retry after
 * {@link #retryAfter()}.
 */
public class IdempotencyInProgressException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    private final Duration retryAfter;

    public IdempotencyInProgressException(String message, Duration retryAfter) {
        super(message);
        this.retryAfter = retryAfter;
    }

    /** When to try again: the rest of the first call's lease, in whole seconds, at least 1 and at most 5. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
