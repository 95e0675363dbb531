/**
 * JTA adapters: the engine's transaction bridge over a {@code TransactionSynchronizationRegistry}, and new
 * transactions through a {@code TransactionManager} for Java SE. Usable directly (stable).
 */
package dev.idempotency.jta;
