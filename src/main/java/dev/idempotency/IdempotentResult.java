package dev.idempotency;

import java.time.Instant;
import java.util.Optional;

/**
 * The result of an idempotent call, and whether it was executed now or replayed: what {@link Idempotency#execute}
 * returns, and what {@link #ofLastCall()} tells the caller of an {@link Idempotent} method.
 *
 * @param value           the result (run now, or replayed); {@code null} for none
 * @param replayed        whether it was replayed from the stored outcome (the work did not run in this call)
 * @param firstExecutedAt when the work ran and its outcome was stored: now for a fresh call; {@code null} where the
 *                        store does not say
 * @param <R>             the result's type
 */
public record IdempotentResult<R>(R value, boolean replayed, Instant firstExecutedAt) {

    private static final ThreadLocal<IdempotentResult<Object>> LAST = new ThreadLocal<>();

    /**
     * What the most recent idempotent call on this thread did ({@link Idempotent} method or {@link Idempotency}): its
     * result, and whether it was replayed. Empty when no idempotent call ran on this thread yet, or the last one failed
     * or ran unprotected. It answers for the most recent call on this thread only: read it right after the call, on the
     * same thread (a call that returns a {@code CompletionStage} is told when it is called, not when it completes).
     *
     * @return the most recent call's result and outcome
     */
    public static Optional<IdempotentResult<Object>> ofLastCall() {
        return Optional.ofNullable(LAST.get());
    }

    /** Set by the library's doors (through a private lookup): the outcome of the call that just ended, or none. */
    @SuppressWarnings("unused")
    private static void remember(IdempotentResult<Object> result) {
        if (result == null) {
            LAST.remove();
        } else {
            LAST.set(result);
        }
    }
}
