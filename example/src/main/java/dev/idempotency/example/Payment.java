package dev.idempotency.example;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A committed payment. */
@Entity
@Table(name = "example_payment")
public class Payment {

    @Id
    @Column(length = 36)
    private String id;

    @Column(nullable = false)
    private long amount;

    @Column(nullable = false, length = 3)
    private String currency;

    @Column(length = 200)
    private String reference;

    @Column(nullable = false, length = 16)
    private String status;

    @Column(length = 100)
    private String owner;

    protected Payment() {
    }

    Payment(String id, long amount, String currency, String reference, String status, String owner) {
        this.id = id;
        this.amount = amount;
        this.currency = currency;
        this.reference = reference;
        this.status = status;
        this.owner = owner;
    }

    public String getId() {
        return id;
    }

    public long getAmount() {
        return amount;
    }

    public String getCurrency() {
        return currency;
    }

    public String getReference() {
        return reference;
    }

    public String getStatus() {
        return status;
    }

    public String getOwner() {
        return owner;
    }
}
