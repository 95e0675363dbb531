package dev.idempotency.example;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The hand-written twin's table: one row per (owner, key), its request's fingerprint and the answer to replay. */
@Entity
@Table(name = "by_hand_key")
public class ByHandKey {

    @Id
    @Column(length = 400)
    private String id;

    @Column(length = 64, nullable = false)
    private String fingerprint;

    @Column(length = 200, nullable = false)
    private String location;

    @Column(length = 4000, nullable = false)
    private String body;

    protected ByHandKey() {
    }

    ByHandKey(String id, String fingerprint, String location, String body) {
        this.id = id;
        this.fingerprint = fingerprint;
        this.location = location;
        this.body = body;
    }

    String fingerprint() {
        return fingerprint;
    }

    String location() {
        return location;
    }

    String body() {
        return body;
    }
}
