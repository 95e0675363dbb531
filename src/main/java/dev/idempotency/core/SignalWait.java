package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.spi.ScopedKey;

import java.time.Duration;

/** A caller's wait for a key's signal (a completion, a release) or the end of a bounded time, interrupt handled once. */
final class SignalWait {

    private SignalWait() {
    }

    /**
     * Waits on the subscription; an interrupt is kept on the thread and ends the call.
     *
     * @throws IdempotencyException interrupted
     */
    static void await(CompletionSignals.Subscription subscription, Duration atMost, ScopedKey key) {
        try {
            subscription.await(atMost);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyException("Interrupted while waiting for the " + key, e);
        }
    }
}
