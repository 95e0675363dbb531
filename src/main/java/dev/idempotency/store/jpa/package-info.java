/**
 * The JPA store. {@link dev.idempotency.store.jpa.JpaIdempotencyStore} and its transaction strategies are
 * usable directly (stable); the entity class is internal.
 */
package dev.idempotency.store.jpa;
