package dev.idempotency.example;

/** A payment as the API shows it. */
public record PaymentView(String id, long amount, String currency, String status) {
    static PaymentView of(Payment p) {
        return new PaymentView(p.getId(), p.getAmount(), p.getCurrency(), p.getStatus());
    }
}
