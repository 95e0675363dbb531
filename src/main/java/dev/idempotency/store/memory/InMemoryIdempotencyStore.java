package dev.idempotency.store.memory;

import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.ClaimRules;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.StoreManagement;
import dev.idempotency.spi.Ticket;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records in this JVM's memory ({@code idempotency.store=memory}): for tests and for a single node that
 * can forget its records on restart. Atomic per key. Completions never join a transaction; a rolled back
 * one is released by the engine afterwards.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore, StoreManagement, dev.idempotency.spi.SightingRecords {

    private final ConcurrentHashMap<ScopedKey, IdempotencyRecord> records = new ConcurrentHashMap<>();

    @Override
    public Claim claim(ClaimRequest request) {
        Claim[] answer = new Claim[1];
        records.compute(request.scopedKey(), (key, existing) -> {
            ClaimRules.Verdict verdict = existing == null ? ClaimRules.Verdict.FRESH : ClaimRules.judge(existing, request);
            if (verdict == ClaimRules.Verdict.EXISTING) {
                answer[0] = new Claim.Existing(existing);
                return existing;
            }
            IdempotencyRecord claimed = ClaimRules.claimed(existing, request, verdict);
            answer[0] = new Claim.Acquired(ClaimRules.ticket(claimed, verdict == ClaimRules.Verdict.TAKE_OVER));
            return claimed;
        });
        return answer[0];
    }

    @Override
    public void complete(Ticket ticket, Completion completion) {
        boolean[] done = new boolean[1];
        records.computeIfPresent(ticket.scopedKey(), (key, r) -> {
            if (!r.isHeldBy(ticket)) {
                return r;
            }
            done[0] = true;
            return r.finished(completion.status(), completion.response(), completion.now());
        });
        if (!done[0]) {
            throw new IdempotencyLeaseLostException("The claim on the " + ticket.scopedKey()
                    + " was lost (taken over after its lease expired); its completion is refused");
        }
    }

    @Override
    public boolean release(Ticket ticket, Instant now) {
        boolean[] done = new boolean[1];
        records.computeIfPresent(ticket.scopedKey(), (key, r) -> {
            // Not fenced by status, unlike the JPA store: a completion here is not part of the caller's transaction,
            // so after that transaction rolled back the release is what undoes it.
            if (!ticket.owner().equals(r.owner()) || r.version() != ticket.version()) {
                return r;
            }
            done[0] = true;
            return r.released(now);
        });
        return done[0];
    }

    @Override
    public boolean renew(Ticket ticket, Instant leaseUntil) {
        boolean[] done = new boolean[1];
        records.computeIfPresent(ticket.scopedKey(), (key, r) -> {
            if (r.status() != RecordStatus.IN_PROGRESS || !ticket.owner().equals(r.owner()) || r.version() != ticket.version()) {
                return r;
            }
            done[0] = true;
            return r.toBuilder().leaseUntil(leaseUntil).build();
        });
        return done[0];
    }

    @Override
    public void recordSightings(java.util.Map<ScopedKey, Instant> lastSeen) {
        lastSeen.forEach((key, at) -> records.computeIfPresent(key, (k, r) -> at.isAfter(r.lastSeen()) ? r.toBuilder().lastSeen(at).build() : r));
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopedKey scopedKey) {
        return Optional.ofNullable(records.get(scopedKey));
    }

    @Override
    public int purgeExpired(Instant now, int max) {
        List<IdempotencyRecord> expired = records.values().stream()
                .filter(r -> r.isExpired(now) && (r.status() != RecordStatus.IN_PROGRESS || r.isLeaseExpired(now)))
                .sorted(Comparator.comparing(IdempotencyRecord::expiresAt))
                .limit(max)
                .toList();
        int removed = 0;
        for (IdempotencyRecord r : expired) {
            if (records.remove(r.scopedKey(), r)) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public List<IdempotencyRecord> all() {
        return records.values().stream().sorted(Comparator.comparing(IdempotencyRecord::firstSeen)).toList();
    }

    @Override
    public synchronized void importAll(List<IdempotencyRecord> imported) {
        for (IdempotencyRecord r : imported) {
            IdempotencyRecord existing = records.get(r.scopedKey());
            if (existing == null || !StoreManagement.keepsNewer(existing, r)) {
                records.put(r.scopedKey(), r);
            }
        }
    }

    @Override
    public synchronized void importAll(List<IdempotencyRecord> imported, Instant now) {
        for (IdempotencyRecord r : imported) {
            IdempotencyRecord existing = records.get(r.scopedKey());
            if (existing != null && isLiveClaim(existing, now)) {
                throw new LiveClaimException(r.scopedKey());
            }
        }
        importAll(imported);
    }

    @Override
    public int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> deleted) {
        return delete(which, now, batchSize, k -> { }, deleted);
    }

    @Override
    public synchronized int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> aboutToDelete,
                                   java.util.function.Consumer<ScopedKey> deleted) {
        List<IdempotencyRecord> oldestFirst = all();
        int remaining = which instanceof Deletion.OldestBeyond o ? Math.max(0, oldestFirst.size() - o.keep()) : Integer.MAX_VALUE;
        int n = 0;
        for (IdempotencyRecord r : oldestFirst) {
            if (n >= remaining) {
                break;
            }
            boolean selected = !isLiveClaim(r, now) && (!(which instanceof Deletion.FirstSeenBefore f) || r.firstSeen().isBefore(f.cutoff()));
            if (selected && records.get(r.scopedKey()) == r) {
                aboutToDelete.accept(r.scopedKey()); // before it is deleted: a consumer that throws keeps it
                if (records.remove(r.scopedKey(), r)) {
                    deleted.accept(r.scopedKey());
                    n++;
                }
            }
        }
        return n;
    }

    private static boolean isLiveClaim(IdempotencyRecord r, Instant now) {
        return r.status() == RecordStatus.IN_PROGRESS && !r.isLeaseExpired(now);
    }

    /** How many records there are, live or not. */
    public int size() {
        return records.size();
    }
}
