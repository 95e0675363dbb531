package dev.idempotency.example;

/** The body of {@code POST /api/transfers}. */
public class TransferRequest {
    public String transferId;
    public Long amount;
    public String from;
    public String to;
}
