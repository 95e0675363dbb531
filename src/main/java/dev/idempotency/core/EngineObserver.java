package dev.idempotency.core;

import dev.idempotency.spi.ScopedKey;

import java.time.Duration;

/**
 * What the engine decided, as it decides it: for counters, timers, events and logs. Called on the request's
 * thread; implementations must be quick and must not throw. Never given a request or a response.
 */
public interface EngineObserver {

    /** Observes nothing. */
    EngineObserver NONE = new EngineObserver() {
    };

    /** The key was claimed (a new request, or a take-over): the operation runs. {@code claim} is the store's time. */
    default void executed(ScopedKey key, Duration claim, boolean takeover) {
    }

    /** A duplicate was answered with the finished record; {@code fromCache} when no store was asked. */
    default void replayed(ScopedKey key, Duration replay, boolean fromCache) {
    }

    /** A duplicate arrived while the first request was running, and was rejected (or gave up waiting). */
    default void conflict(ScopedKey key) {
    }

    /** The key was reused with another request. */
    default void mismatch(ScopedKey key) {
    }

    /** The operation's outcome was stored; {@code completion} is the store's time. */
    default void completed(ScopedKey key, Duration completion, boolean failed) {
    }

    /** The key was released (the operation failed, or its transaction rolled back). */
    default void released(ScopedKey key) {
    }

    /** A request came without a usable key (missing or malformed). */
    default void keyRejected(String namespace, boolean missing) {
    }

    /** The store failed. */
    default void storeError(String namespace, RuntimeException error) {
    }
}
