package dev.idempotency.core;

import dev.idempotency.spi.ScopedKey;

import java.time.Duration;

/**
 * Wakes callers waiting for a key when its record changes (completed, failed or released). The local
 * implementation wakes waiters in this JVM; a clustered one wakes them on every node.
 */
public interface CompletionSignals {

    /**
     * Starts listening for a key. Subscribe before reading the record, so that a change between the read
     * and the wait is not missed.
     */
    Subscription subscribe(ScopedKey key);

    /** Announces that the key's record changed. */
    void signal(ScopedKey key);

    /**
     * Calls back with the {@link ScopedKey#cacheId()} of every key signalled from now on, on the signalling thread
     * (a completion here, or another node's, as the cluster announces it): must be quick and must not block.
     */
    void onSignal(java.util.function.Consumer<String> cacheIds);

    /** One waiter's interest in one key. */
    interface Subscription extends AutoCloseable {
        /** Blocks until the key is signalled or the time is up; returns whether it was signalled. */
        boolean await(Duration max) throws InterruptedException;

        @Override
        void close();
    }
}
