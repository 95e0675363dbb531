package dev.idempotency.example;

/** {@code GET /api/payments/stats}. */
public record Stats(long charges, long payments, long transfers) {
}
