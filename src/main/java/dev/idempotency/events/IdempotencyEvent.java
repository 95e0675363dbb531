package dev.idempotency.events;

import java.time.Instant;

/**
 * A decision the library took, fired as a CDI event (observe it with {@code @Observes} or
 * {@code @ObservesAsync}). Carries the scope and key, never the request or the response.
 */
public sealed interface IdempotencyEvent permits Replayed, Conflicted, Mismatched, TakenOver, ResponseStored {

    /**
     * The operation's namespace.
     *
     * @return the namespace
     */
    String namespace();

    /**
     * The caller the key belongs to ({@code anonymous}, or empty when keys are not scoped per caller).
     *
     * @return the principal part of the scoped key
     */
    String principal();

    /**
     * The client's key.
     *
     * @return the key
     */
    String key();

    /**
     * When it happened.
     *
     * @return the instant of the decision
     */
    Instant at();
}
