package dev.idempotency.helidon;

/** What a charge answers: the payment's id, the key it was charged under, the amount, and which run of the key wrote it. */
public record Receipt(String id, String key, long amount, int run) {
}
