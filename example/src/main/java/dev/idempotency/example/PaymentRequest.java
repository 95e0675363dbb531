package dev.idempotency.example;

/**
 * The body of {@code POST /api/payments}. {@code delayMillis} makes the charge take that long and
 * {@code fail} makes it throw after it started: both exist to show the edge cases.
 */
public class PaymentRequest {
    public Long amount;
    public String currency;
    public String reference;
    public Long delayMillis;
    public Boolean fail;
}
