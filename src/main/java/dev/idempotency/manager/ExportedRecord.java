package dev.idempotency.manager;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyManager;
import dev.idempotency.IdempotencyResponseNotFoundException;
import dev.idempotency.IdempotencyTransferException;
import dev.idempotency.RequestKey;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Policy;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Sighting;
import dev.idempotency.events.ResponseStored;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;

/**
 * One record of an export, as JSON. Times are epoch milliseconds; the response is base64. {@code check} (version 2)
 * is the SHA-256 of the record's place in the file (1 for the first record) and its JSON without the check: a line
 * edited, moved or repeated no longer matches. It guards against accidents, not against someone who recomputes it.
 */
public class ExportedRecord {
    public String check;
    public String namespace;
    public String principal;
    public String key;
    public String status;
    public String fingerprint;
    public String response;
    public String requestType;
    public int attempts;
    public long firstSeen;
    public long lastSeen;
    public Long completedAt;
    public long expiresAt;
    public Long leaseUntil;
    public String owner;
    public long version;

    static ExportedRecord of(IdempotencyRecord r) {
        ExportedRecord e = new ExportedRecord();
        e.namespace = r.scopedKey().namespace();
        e.principal = r.scopedKey().principal();
        e.key = r.scopedKey().key();
        e.status = r.status().name();
        e.fingerprint = r.fingerprint();
        e.response = r.response() == null ? null : Base64.getEncoder().encodeToString(r.response());
        e.requestType = r.requestType();
        e.attempts = r.attempts();
        e.firstSeen = r.firstSeen().toEpochMilli();
        e.lastSeen = r.lastSeen().toEpochMilli();
        e.completedAt = r.completedAt() == null ? null : r.completedAt().toEpochMilli();
        e.expiresAt = r.expiresAt().toEpochMilli();
        e.leaseUntil = r.leaseUntil() == null ? null : r.leaseUntil().toEpochMilli();
        e.owner = r.owner();
        e.version = r.version();
        return e;
    }

    /** The check of the record at {@code ordinal} whose JSON, without its check, is {@code json}. */
    static String check(int ordinal, String json) {
        return Fingerprint.sha256Hex((ordinal + "\n" + json).getBytes(StandardCharsets.UTF_8));
    }

    /** Whether this record, read at {@code ordinal}, carries the check its content and place give. */
    boolean checked(int ordinal, Jsonb jsonb) {
        String carried = check;
        check = null;
        try {
            return carried != null && carried.equals(check(ordinal, jsonb.toJson(this)));
        } finally {
            check = carried;
        }
    }

    /** What makes this record one the library cannot have written, or null. */
    String problem() {
        if (status == null || java.util.Arrays.stream(RecordStatus.values()).noneMatch(v -> v.name().equals(status))) {
            return "has no known status";
        }
        if (fingerprint == null) {
            return "has no fingerprint";
        }
        if (RecordStatus.valueOf(status) != RecordStatus.IN_PROGRESS && completedAt == null) {
            return "is finished but has no completedAt";
        }
        if (attempts < 0 || version < 0) {
            return "has a negative attempts or version";
        }
        return null;
    }

    IdempotencyRecord toRecord() {
        return IdempotencyRecord.of(new ScopedKey(namespace, principal, key)).status(RecordStatus.valueOf(status))
                .fingerprint(fingerprint).response(response == null ? null : Base64.getDecoder().decode(response))
                .requestType(requestType).attempts(attempts).firstSeen(Instant.ofEpochMilli(firstSeen))
                .lastSeen(Instant.ofEpochMilli(lastSeen)).completedAt(completedAt == null ? null : Instant.ofEpochMilli(completedAt))
                .expiresAt(Instant.ofEpochMilli(expiresAt)).leaseUntil(leaseUntil == null ? null : Instant.ofEpochMilli(leaseUntil))
                .owner(owner).version(version).build();
    }
}
