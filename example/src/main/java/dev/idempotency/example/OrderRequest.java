package dev.idempotency.example;

/**
 * The body of {@code POST /api/orders}. {@code placedAt} is the client's own time of the attempt, which a retry
 * may change.
 */
public class OrderRequest {
    public String orderId;
    public Long amount;
    public String currency;
    public String placedAt;
}
