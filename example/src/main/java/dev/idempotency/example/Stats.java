package dev.idempotency.example;

/**
 * {@code GET /api/payments/stats}: {@code flushed} counts the charges that wrote their payment row (before
 * their commit), so a test can tell that a paused charge has written it.
 */
public record Stats(long charges, long flushed, long payments, long transfers) {
}
