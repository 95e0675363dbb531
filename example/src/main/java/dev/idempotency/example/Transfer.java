package dev.idempotency.example;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A committed transfer; its id is the client's. */
@Entity
@Table(name = "example_transfer")
public class Transfer {

    @Id
    @Column(name = "transfer_id", length = 100)
    private String transferId;

    @Column(nullable = false)
    private long amount;

    @Column(name = "from_account", nullable = false, length = 100)
    private String from;

    @Column(name = "to_account", nullable = false, length = 100)
    private String to;

    protected Transfer() {
    }

    Transfer(String transferId, long amount, String from, String to) {
        this.transferId = transferId;
        this.amount = amount;
        this.from = from;
        this.to = to;
    }

    public String getTransferId() {
        return transferId;
    }

    public long getAmount() {
        return amount;
    }

    public String getFrom() {
        return from;
    }

    public String getTo() {
        return to;
    }
}
