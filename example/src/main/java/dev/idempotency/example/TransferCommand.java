package dev.idempotency.example;

import dev.idempotency.IdempotencyKey;

/**
 * A transfer as the service receives it: the command carries its own idempotency key, the transfer id; the rest of
 * it (amount, from, to) is the request's fingerprint.
 */
public record TransferCommand(@IdempotencyKey String transferId, long amount, String from, String to) {
}
