package dev.idempotency.helidon;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A payment written through the application's JPA unit. */
@Entity
@Table(name = "payment")
public class Payment {

    @Id
    @Column(length = 64)
    public String id;

    @Column(name = "idem_key", nullable = false)
    public String key;

    @Column(nullable = false)
    public long amount;
}
