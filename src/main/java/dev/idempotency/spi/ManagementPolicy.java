package dev.idempotency.spi;

import dev.idempotency.IdempotencyManager;

/**
 * What the library does with its records on each purge run, besides deleting expired ones. The library's
 * own follows {@code idempotency.manager.policy} ({@code none}, {@code age}, {@code size}); a CDI bean of this
 * type in the application replaces it.
 */
@FunctionalInterface
public interface ManagementPolicy {
    /**
     * Applies the policy once, on a purge run.
     *
     * @param manager the manager through which the policy reads and deletes records
     */
    void apply(IdempotencyManager manager);
}
