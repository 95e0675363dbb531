package dev.idempotency.store.jpa;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Index;
import jakarta.persistence.Table;

import java.time.Instant;

/**
 * The table {@code idempotency_record}: one row per scoped key. Times are epoch milliseconds (portable
 * across JPA providers and databases). The DDL for H2, PostgreSQL and MariaDB/MySQL ships in
 * {@code META-INF/idempotency/ddl/}. Internal: use the SPI types, not this class.
 */
@Entity(name = "IdempotencyRecord")
@Table(name = "idempotency_record",
        indexes = @Index(name = "ix_idempotency_expires", columnList = "expires_at"))
public class IdempotencyRecordEntity {

    @Id
    @Column(name = "id", length = 64, nullable = false)
    private String id;

    @Column(name = "namespace", length = ScopedKey.MAX_NAMESPACE, nullable = false)
    private String namespace;

    @Column(name = "principal", length = ScopedKey.MAX_PRINCIPAL, nullable = false)
    private String principal;

    @Column(name = "idem_key", length = ScopedKey.MAX_KEY, nullable = false)
    private String key;

    @Enumerated(EnumType.STRING)
    @Column(name = "status", length = 16, nullable = false)
    private RecordStatus status;

    @Column(name = "fingerprint", length = 64, nullable = false)
    private String fingerprint;

    @Column(name = "response", length = 16_777_216)
    private byte[] response;

    @Column(name = "request_type", length = 100)
    private String requestType;

    @Column(name = "attempts", nullable = false)
    private int attempts;

    @Column(name = "first_seen", nullable = false)
    private long firstSeen;

    @Column(name = "last_seen", nullable = false)
    private long lastSeen;

    @Column(name = "completed_at")
    private Long completedAt;

    @Column(name = "expires_at", nullable = false)
    private long expiresAt;

    @Column(name = "lease_until")
    private Long leaseUntil;

    @Column(name = "owner", length = 100)
    private String owner;

    @Column(name = "version", nullable = false)
    private long version;

    protected IdempotencyRecordEntity() {
    }

    static IdempotencyRecordEntity of(IdempotencyRecord r) {
        IdempotencyRecordEntity e = new IdempotencyRecordEntity();
        e.id = r.scopedKey().id();
        e.namespace = r.scopedKey().namespace();
        e.principal = r.scopedKey().principal();
        e.key = r.scopedKey().key();
        e.assign(r);
        return e;
    }

    /** Copies every mutable field from the record (the scoped key stays). */
    void assign(IdempotencyRecord r) {
        status = r.status();
        fingerprint = r.fingerprint();
        response = r.response();
        requestType = r.requestType();
        attempts = r.attempts();
        firstSeen = r.firstSeen().toEpochMilli();
        lastSeen = r.lastSeen().toEpochMilli();
        completedAt = millis(r.completedAt());
        expiresAt = r.expiresAt().toEpochMilli();
        leaseUntil = millis(r.leaseUntil());
        owner = r.owner();
        version = r.version();
    }

    IdempotencyRecord toRecord() {
        return IdempotencyRecord.of(new ScopedKey(namespace, principal, key)).status(status).fingerprint(fingerprint)
                .response(response).requestType(requestType).attempts(attempts).firstSeen(Instant.ofEpochMilli(firstSeen))
                .lastSeen(Instant.ofEpochMilli(lastSeen)).completedAt(instant(completedAt))
                .expiresAt(Instant.ofEpochMilli(expiresAt)).leaseUntil(instant(leaseUntil)).owner(owner).version(version)
                .build();
    }

    private static Long millis(Instant i) {
        return i == null ? null : i.toEpochMilli();
    }

    private static Instant instant(Long millis) {
        return millis == null ? null : Instant.ofEpochMilli(millis);
    }
}
