package dev.idempotency.example;

/** A transfer as the API and the service return it (stored and replayed by the interceptor). */
public record TransferView(String transferId, long amount, String from, String to) {
}
