/**
 * The manager door: the injectable {@code IdempotencyManager} (check, store, await, delete, purge) and its transfer file (export and import). Internal: not API.
 */
package dev.idempotency.manager;
