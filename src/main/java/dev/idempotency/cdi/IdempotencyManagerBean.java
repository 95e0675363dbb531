package dev.idempotency.cdi;

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
import dev.idempotency.events.ResponseStored;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.StoreManagement;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The {@link IdempotencyManager} bean: the programmatic door (SPEC section 5) over the runtime's store, cache and
 * wake-ups. Internal: inject {@link IdempotencyManager}.
 */
@ApplicationScoped
public class IdempotencyManagerBean implements IdempotencyManager {

    static final String SEEN = "idempotency-manager/seen";
    static final String RESPONSES = "idempotency-manager/responses";
    /** Responses stored under a primary and a secondary id: a namespace of their own, so no primary id can name one. */
    static final String RESPONSES_BY_SECONDARY = "idempotency-manager/responses-by-secondary";
    private static final String SEEN_FINGERPRINT = "seen";

    @Inject
    IdempotencyRuntime runtime;

    @Inject
    Callers callers;

    @Inject
    IdempotencyEngine engine;

    @Inject
    Event<ResponseStored> events;

    private final Map<String, List<Registration>> listeners = new ConcurrentHashMap<>();
    private volatile boolean subscribed;

    private record Registration(RequestKey key, ResponseListener listener, java.util.concurrent.atomic.AtomicBoolean called) {
    }

    @Override
    public Check check(RequestKey key) {
        if (!enabled(key)) {
            return new Check(false, Optional.empty(), false);
        }
        Instant now = engine.clock().instant();
        ScopedKey seenKey = seenKey(key);
        IdempotencyRecord known = runtime.recordCacheOrNone().get(seenKey).filter(r -> !r.isExpired(now)).orElse(null);
        boolean seen;
        Instant lastSeen;
        boolean stored;
        if (known != null) {
            seen = true;
            lastSeen = known.lastSeen();
            stored = flag(known) || responseFlag(key);
        } else {
            Claim claim = engine.store().claim(new ClaimRequest(seenKey, SEEN_FINGERPRINT, key.requestType(), engine.nodeId(), now,
                    now.plus(runtime.settings().lease()), now.plus(runtime.settings().ttl())));
            if (claim instanceof Claim.Acquired acquired) {
                engine.store().complete(acquired.ticket(), new Completion(RecordStatus.COMPLETED, new byte[] {0}, now, false));
                seen = false;
                lastSeen = null;
                known = acquired.ticket().finished(RecordStatus.COMPLETED, new byte[] {0}, now);
            } else {
                known = ((Claim.Existing) claim).record();
                seen = true;
                lastSeen = known.lastSeen();
            }
            stored = responseRecord(key).isPresent();
        }
        // "Seen now": kept in the (replicated) cache, so that checking a known id runs no SQL.
        runtime.recordCacheOrNone().put(known.toBuilder().status(RecordStatus.COMPLETED).response(new byte[] {(byte) (stored ? 1 : 0)})
                .lastSeen(now).leaseUntil(null).build());
        return new Check(seen, lastSeen == null ? Optional.empty() : Optional.of(Duration.between(lastSeen, now)), stored);
    }

    @Override
    public void store(RequestKey key, byte[] response) {
        ScopedKey responseKey = responseKey(key);
        // Through the engine, as every door: the same bytes stored already are a replay (nothing to do), other
        // bytes are IdempotencyKeyReusedException, a store still running (or crashed, until its lease ends) is
        // IdempotencyInProgressException; observed like the other doors.
        Decision decision = engine.begin(responseKey, Fingerprint.sha256Hex(response), key.requestType(), storePolicy());
        if (decision instanceof Decision.Replay) {
            return;
        }
        Ticket ticket = ((Decision.Proceed) decision).ticket();
        IdempotencyRecord stored;
        try {
            stored = engine.completeOnItsOwn(ticket, response);
        } catch (RuntimeException e) {
            engine.release(ticket);
            throw e;
        }
        // Detection learns that a response exists.
        ScopedKey seenKey = seenKey(key);
        IdempotencyRecord seen = runtime.recordCacheOrNone().get(seenKey).orElse(null);
        if (seen != null) {
            runtime.recordCacheOrNone().put(seen.toBuilder().status(RecordStatus.COMPLETED).response(new byte[] {1}).leaseUntil(null).build());
        }
        stored(stored); // this node's listeners (with no cache, nothing else tells them)
        events.fire(new ResponseStored(responseKey.namespace(), responseKey.principal(), key.primaryId(), stored.completedAt(),
                key.secondaryId(), key.requestType()));
    }

    /** A stored response's claim: the configured time to live and lease; a concurrent store is told "in progress". */
    private Policy storePolicy() {
        return new Policy(runtime.settings().ttl(), runtime.settings().lease(), false, Duration.ZERO);
    }

    @Override
    public byte[] retrieve(RequestKey key) {
        return responseRecord(key).map(IdempotencyRecord::response).orElseThrow(() ->
                new IdempotencyResponseNotFoundException("No response is stored for the " + responseKey(key)));
    }

    @Override
    public Optional<byte[]> await(RequestKey key, Duration timeout) {
        // The response's own key: its completion wakes this node's waiters, wherever it was stored.
        return engine.await(responseKey(key), timeout)
                .filter(r -> r.status() == RecordStatus.COMPLETED).map(IdempotencyRecord::response);
    }

    @Override
    public void addListener(RequestKey key, ResponseListener listener) {
        subscribe();
        Registration registration = new Registration(key, listener, new java.util.concurrent.atomic.AtomicBoolean());
        listeners.computeIfAbsent(responseKey(key).id(), k -> new CopyOnWriteArrayList<>()).add(registration);
        responseRecord(key).ifPresent(r -> call(registration, r.response()));
    }

    // ------------------------------------------------------------------------------------ M7: transfer

    @Override
    public int export(Path file) {
        List<IdempotencyRecord> records = management("export its records").all();
        try (Jsonb jsonb = JsonbBuilder.create()) {
            Path dir = file.toAbsolutePath().getParent();
            Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".part");
            try (BufferedWriter out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                out.write(jsonb.toJson(new ExportHeader(ExportHeader.FORMAT, ExportHeader.VERSION, records.size())));
                out.newLine();
                for (IdempotencyRecord r : records) {
                    out.write(jsonb.toJson(ExportedRecord.of(r)));
                    out.newLine();
                }
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return records.size();
        } catch (IOException e) {
            throw new IdempotencyTransferException("Could not write the export " + file + ": " + e.getMessage(), e);
        } catch (Exception e) {
            throw new IdempotencyTransferException("Could not write the export " + file + ": " + e, e);
        }
    }

    @Override
    public int importFrom(Path file) {
        List<IdempotencyRecord> records = new ArrayList<>();
        try (Jsonb jsonb = JsonbBuilder.create(); BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String first = in.readLine();
            ExportHeader header = first == null ? null : jsonb.fromJson(first, ExportHeader.class);
            if (header == null || !ExportHeader.FORMAT.equals(header.format) || header.version != ExportHeader.VERSION) {
                throw new IdempotencyTransferException(file + " is not an idempotency-jakarta export of version " + ExportHeader.VERSION);
            }
            String line;
            int lineNumber = 1;
            while ((line = in.readLine()) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    records.add(jsonb.fromJson(line, ExportedRecord.class).toRecord());
                } catch (RuntimeException e) {
                    throw new IdempotencyTransferException(file + " is corrupt at line " + lineNumber, e);
                }
            }
            if (records.size() != header.records) {
                throw new IdempotencyTransferException(file + " is truncated: its header announces " + header.records
                        + " records, it holds " + records.size());
            }
        } catch (IdempotencyTransferException e) {
            throw e;
        } catch (IOException e) {
            throw new IdempotencyTransferException("Could not read " + file + ": " + e.getMessage(), e);
        } catch (Exception e) {
            throw new IdempotencyTransferException(file + " is corrupt: " + e.getMessage(), e);
        }
        management("import records").importAll(records);
        runtime.recordCacheOrNone().clear();
        return records.size();
    }

    // ------------------------------------------------------------------------------------ M8: management

    @Override
    public int clear() {
        return delete(new Deletion.All());
    }

    @Override
    public int clearOlderThan(Duration age) {
        return delete(new Deletion.FirstSeenBefore(engine.clock().instant().minus(age)));
    }

    @Override
    public int trimTo(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max must be zero or more");
        }
        return delete(new Deletion.OldestBeyond(max));
    }

    @Override
    public void flushCache() {
        runtime.recordCacheOrNone().clear();
    }

    private int delete(Deletion which) {
        RecordCache cache = runtime.recordCacheOrNone();
        return management("delete records").delete(which, engine.clock().instant(), runtime.settings().purgeBatchSize(), cache::remove);
    }

    /** The store's management capability, or a clear refusal naming the store. */
    private StoreManagement management(String what) {
        var store = engine.store();
        if (store instanceof StoreManagement management) {
            return management;
        }
        throw new UnsupportedOperationException(store.getClass().getName() + " cannot " + what
                + ": it does not implement dev.idempotency.spi.StoreManagement");
    }

    // --------------------------------------------------------------------------------------- internals

    private boolean enabled(RequestKey key) {
        return runtime.settings().requestTypeEnabled(key.requestType());
    }

    /** Whose keys these are: the caller's (SPEC H9, as the annotations'), unless {@code idempotency.manager.scope-by-principal=false}. */
    private String principal() {
        return callers.principalName(runtime.settings().managerScopeByPrincipal());
    }

    private ScopedKey seenKey(RequestKey key) {
        return new ScopedKey(SEEN, principal(), checkId(key.primaryId(), "primary id"));
    }

    private ScopedKey responseKey(RequestKey key) {
        String primary = checkId(key.primaryId(), "primary id");
        if (key.secondaryId() == null) {
            return new ScopedKey(RESPONSES, principal(), primary);
        }
        // Length-prefixed, so that ("a b", "c") and ("a", "b c") are two keys; too long: its SHA-256 (64 hex
        // digits, no ':', so it cannot equal a length-prefixed id).
        String secondary = checkId(key.secondaryId(), "secondary id");
        String combined = primary.length() + ":" + primary + " " + secondary;
        return new ScopedKey(RESPONSES_BY_SECONDARY, principal(), combined.length() <= ScopedKey.MAX_KEY ? combined
                : Fingerprint.sha256Hex(combined.getBytes(StandardCharsets.UTF_8)));
    }

    /** SPEC H3 as for every door: {@code idempotency.max-key-length}, printable ASCII; a bad id is counted. */
    private String checkId(String id, String what) {
        String problem = KeyRules.problem(id, runtime.settings().maxKeyLength());
        if (problem != null) {
            engine.observer().keyRejected(RESPONSES, false);
            throw new IdempotencyKeyInvalidException("The " + what + " " + problem);
        }
        return id;
    }

    private Optional<IdempotencyRecord> responseRecord(RequestKey key) {
        return engine.lookup(responseKey(key)).filter(r -> r.status() == RecordStatus.COMPLETED);
    }

    private boolean responseFlag(RequestKey key) {
        return key.secondaryId() != null && runtime.recordCacheOrNone().get(responseKey(key)).isPresent();
    }

    private static boolean flag(IdempotencyRecord seen) {
        return seen.response() != null && seen.response().length == 1 && seen.response()[0] == 1;
    }

    private void subscribe() {
        if (!subscribed) {
            synchronized (this) {
                if (!subscribed) {
                    runtime.recordCacheOrNone().onPut(r -> {
                        String namespace = r.scopedKey().namespace();
                        if (RESPONSES.equals(namespace) || RESPONSES_BY_SECONDARY.equals(namespace)) {
                            stored(r);
                        }
                    });
                    subscribed = true;
                }
            }
        }
    }

    /** A response record appeared (stored here, or seen arriving from another node). */
    private void stored(IdempotencyRecord r) {
        List<Registration> registered = listeners.get(r.scopedKey().id());
        if (registered != null) {
            for (Registration reg : registered) {
                call(reg, r.response());
            }
        }
    }

    private void call(Registration reg, byte[] response) {
        if (reg.called().compareAndSet(false, true)) {
            listeners.computeIfPresent(responseKey(reg.key()).id(), (k, l) -> {
                l.remove(reg);
                return l.isEmpty() ? null : l;
            });
            reg.listener().stored(reg.key(), response);
        }
    }

    /** The export file's first line. */
    public static class ExportHeader {
        static final String FORMAT = "idempotency-jakarta-export";
        static final int VERSION = 1;
        public String format;
        public int version;
        public int records;

        public ExportHeader() {
        }

        ExportHeader(String format, int version, int records) {
            this.format = format;
            this.version = version;
            this.records = records;
        }
    }

    /** One record of an export, as JSON. Times are epoch milliseconds; the response is base64. */
    public static class ExportedRecord {
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

        IdempotencyRecord toRecord() {
            return IdempotencyRecord.of(new ScopedKey(namespace, principal, key)).status(RecordStatus.valueOf(status))
                    .fingerprint(fingerprint).response(response == null ? null : Base64.getDecoder().decode(response))
                    .requestType(requestType).attempts(attempts).firstSeen(Instant.ofEpochMilli(firstSeen))
                    .lastSeen(Instant.ofEpochMilli(lastSeen)).completedAt(completedAt == null ? null : Instant.ofEpochMilli(completedAt))
                    .expiresAt(Instant.ofEpochMilli(expiresAt)).leaseUntil(leaseUntil == null ? null : Instant.ofEpochMilli(leaseUntil))
                    .owner(owner).version(version).build();
        }
    }
}
