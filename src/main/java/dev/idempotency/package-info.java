/**
 * The public API (stable): {@link dev.idempotency.Idempotent}, {@link dev.idempotency.IdempotencyKey},
 * {@link dev.idempotency.IdempotencyManager} and {@link dev.idempotency.RequestKey}, the qualifier
 * {@link dev.idempotency.ForIdempotency} for the beans an application supplies, and the exception hierarchy rooted
 * at {@link dev.idempotency.IdempotencyException}. Nothing here imports an internal package (ArchitectureTest).
 */
package dev.idempotency;
