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
 * The {@link IdempotencyManager} bean: the programmatic door over the runtime's store, cache and
 * wake-ups. Internal: inject {@link IdempotencyManager}.
 */
@ApplicationScoped
public class IdempotencyManagerBean implements IdempotencyManager {

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(IdempotencyManagerBean.class.getName());

    static final String SEEN = "idempotency-manager/seen";
    static final String RESPONSES = "idempotency-manager/responses";
    /** The fingerprint a store claims a response's key with: the same for every store of it (the key is the request). */
    static final String STORE_CLAIM = Fingerprint.sha256Hex("idempotency-manager/store".getBytes(StandardCharsets.UTF_8));
    /** Responses stored under a primary and a secondary id: a namespace of their own, so no primary id can name one. */
    static final String RESPONSES_BY_SECONDARY = "idempotency-manager/responses-by-secondary";

    @Inject
    IdempotencyRuntime runtime;

    @Inject
    Callers callers;

    @Inject
    IdempotencyEngine engine;

    @Inject
    Event<ResponseStored> events;

    @Override
    public Check check(RequestKey key) {
        if (!enabled(key)) {
            return new Check(false, Optional.empty(), false);
        }
        Instant now = engine.clock().instant();
        ScopedKey seenKey = seenKey(key);
        Sighting sighting = engine.sight(seenKey, key.requestType(), policy());
        // Whether a response is stored: the response's own record, from the cache (where it lives no longer than the
        // record, and is put again when read from the store) or else from the store. Not the id's sighting: a response
        // is kept per primary and secondary id, and lives its own time. A cache's "no response" is never trusted:
        // another node may have stored one that this node's own cache never saw, and a shared cache may have lost it (a
        // flush, an eviction). A gateway that runs its work on "not stored" would run it twice.
        boolean stored = responseRecord(key).isPresent();
        return new Check(sighting.seenBefore(), sighting.lastSeen().map(at -> Duration.between(at, now)), stored);
    }

    @Override
    public void store(RequestKey key, byte[] response) {
        java.util.Objects.requireNonNull(response, "response");
        ScopedKey responseKey = responseKey(key);
        // Through the engine, as every door, claimed by the key alone: a store still running is
        // IdempotencyInProgressException whatever its bytes, and one whose node died is taken over by the next store
        // once its lease ends (its bytes are not a request's: a retry's response may differ). A response stored already
        // is judged by its bytes: the same do nothing, others are IdempotencyKeyReusedException. Observed like the other doors.
        Decision decision;
        try {
            decision = engine.begin(responseKey, STORE_CLAIM, key.requestType(), policy());
        } catch (IdempotencyKeyReusedException older) {
            // A record claimed by an earlier version, by its bytes' fingerprint: a finished one is judged below by its
            // bytes; a claim whose node died (its lease over) is taken over under its own fingerprint.
            decision = takeOverAnEarlierClaim(key, responseKey);
        }
        if (!(decision instanceof Decision.Proceed)) {
            IdempotencyRecord stored = decision instanceof Decision.Replay replay ? replay.record() : responseRecord(key).orElse(null);
            if (stored == null) {
                throw new IdempotencyInProgressException("Another response for the " + responseKey + " is being stored: await it",
                        Duration.ofSeconds(1));
            }
            if (java.util.Arrays.equals(stored.response(), response)) {
                return;
            }
            throw new IdempotencyKeyReusedException("Another response is stored for the " + responseKey + "; retrieve it");
        }
        Ticket ticket = ((Decision.Proceed) decision).ticket();
        IdempotencyRecord stored;
        try {
            stored = engine.completeOnItsOwn(ticket, response); // calls the listeners of every node
        } catch (RuntimeException e) {
            engine.release(ticket);
            throw e;
        }
        engine.noteSighting(seenKey(key)); // detection learns that a response exists
        events.fire(new ResponseStored(responseKey.namespace(), responseKey.principal(), key.primaryId(), stored.completedAt(),
                key.secondaryId(), key.requestType()));
    }

    /** A dead claim of an earlier version's store taken over; {@code null} when there is none (running, or finished). */
    private Decision takeOverAnEarlierClaim(RequestKey key, ScopedKey responseKey) {
        Optional<IdempotencyRecord> claim = engine.store().find(responseKey);
        if (claim.isEmpty() || claim.get().status() != RecordStatus.IN_PROGRESS || !claim.get().isLeaseExpired(engine.clock().instant())) {
            return null;
        }
        try {
            return engine.begin(responseKey, claim.get().fingerprint(), key.requestType(), policy());
        } catch (IdempotencyKeyReusedException | IdempotencyInProgressException taken) {
            return null; // another store took it over first
        }
    }

    /** The configured time to live and lease; a concurrent store is told "in progress". */
    private Policy policy() {
        return new Policy(runtime.settings().ttl(), runtime.settings().lease(), false, Duration.ZERO);
    }

    @Override
    public byte[] retrieve(RequestKey key) {
        return responseRecord(key).map(IdempotencyManagerBean::copyOfResponse).orElseThrow(() ->
                new IdempotencyResponseNotFoundException("No response is stored for the " + responseKey(key)));
    }

    @Override
    public Optional<byte[]> await(RequestKey key, Duration timeout) {
        // The response's own key: its completion wakes this node's waiters, wherever it was stored.
        return engine.await(responseKey(key), timeout)
                .filter(r -> r.status() == RecordStatus.COMPLETED).map(IdempotencyManagerBean::copyOfResponse);
    }

    @Override
    public void addListener(RequestKey key, ResponseListener listener) {
        engine.whenFinished(responseKey(key), r -> {
            if (r.status() == RecordStatus.COMPLETED) {
                listener.stored(key, copyOfResponse(r));
            }
        });
    }

    // ------------------------------------------------------------------------------- export and import

    @Override
    public int export(Path file) {
        return TransferFile.export(engine, file);
    }

    @Override
    public int importFrom(Path file) {
        return TransferFile.importFrom(engine, file);
    }

    // ---------------------------------------------------------------------------------------- management

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
        engine.flushCache();
    }

    private int delete(Deletion which) {
        return engine.delete(which, runtime.settings().purgeBatchSize());
    }

    // --------------------------------------------------------------------------------------- internals

    private boolean enabled(RequestKey key) {
        return runtime.settings().requestTypeEnabled(key.requestType());
    }

    /** Whose keys these are: the caller's (as the annotations'), unless {@code idempotency.manager.scope-by-principal=false}. */
    private String principal() {
        return callers.principalName(runtime.settings().managerScopeByPrincipal());
    }

    private ScopedKey seenKey(RequestKey key) {
        return runtime.atRest(new ScopedKey(SEEN, principal(), checkId(key.primaryId(), "primary id")));
    }

    private ScopedKey responseKey(RequestKey key) {
        String primary = checkId(key.primaryId(), "primary id");
        if (key.secondaryId() == null) {
            return runtime.atRest(new ScopedKey(RESPONSES, principal(), primary));
        }
        // Length-prefixed, so that ("a b", "c") and ("a", "b c") are two keys; too long: its SHA-256 (64 hex
        // digits, no ':', so it cannot equal a length-prefixed id).
        String secondary = checkId(key.secondaryId(), "secondary id");
        String combined = primary.length() + ":" + primary + " " + secondary;
        return runtime.atRest(new ScopedKey(RESPONSES_BY_SECONDARY, principal(), combined.length() <= ScopedKey.MAX_KEY ? combined
                : Fingerprint.sha256Hex(combined.getBytes(StandardCharsets.UTF_8))));
    }

    /** The key syntax of every door: {@code idempotency.max-key-length}, printable ASCII; a bad id is counted. */
    private String checkId(String id, String what) {
        String problem = KeyRules.problem(id, runtime.settings().maxKeyLength());
        if (problem != null) {
            engine.observer().keyRejected(RESPONSES, false);
            throw new IdempotencyKeyInvalidException("The " + what + " " + problem);
        }
        return id;
    }

    /**
     * The caller's own copy of a stored response: the record may be the one the cache's replays share (decoded once),
     * and an application that writes into the array it was given must not change what the next duplicate is answered.
     */
    private static byte[] copyOfResponse(IdempotencyRecord r) {
        return r.response() == null ? null : r.response().clone();
    }

    private Optional<IdempotencyRecord> responseRecord(RequestKey key) {
        return engine.lookup(responseKey(key)).filter(r -> r.status() == RecordStatus.COMPLETED);
    }
}
