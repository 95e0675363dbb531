/**
 * The public API (stable): {@link dev.idempotency.Idempotent}, {@link dev.idempotency.IdempotencyKey} and
 * the exception hierarchy rooted at {@link dev.idempotency.IdempotencyException}.
 */
package dev.idempotency;
