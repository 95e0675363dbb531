package dev.idempotency.spi;

/**
 * The decision every store makes, under its lock, when a record already exists for the key being claimed (claim it
 * afresh, take it over, or leave it: "The life of a key" in CONTRIBUTING.md). Stores call it so that they all judge
 * alike.
 */
public final class ClaimRules {

    private ClaimRules() {
    }

    /** What to do with an existing record. */
    public enum Verdict {
        /** Expired, or released: replace it with a fresh claim. */
        FRESH,
        /** In progress, lease expired, same request: take it over (raise the version). */
        TAKE_OVER,
        /** Anything else: leave it and return it to the engine, which replays, rejects or waits. */
        EXISTING
    }

    /**
     * Judges an existing record against a claim.
     *
     * @param existing the record the store holds for the key
     * @param request  the claim
     * @return {@link Verdict#FRESH} when the record is expired or released, {@link Verdict#TAKE_OVER} when its
     *         lease expired and the fingerprint is the claim's, else {@link Verdict#EXISTING}
     */
    public static Verdict judge(IdempotencyRecord existing, ClaimRequest request) {
        if (existing.isExpired(request.now()) || existing.isReleased()) {
            return Verdict.FRESH;
        }
        if (existing.isLeaseExpired(request.now()) && existing.fingerprint().equals(request.fingerprint())) {
            return Verdict.TAKE_OVER;
        }
        return Verdict.EXISTING;
    }

    /**
     * The record a claim writes, for {@link Verdict#FRESH} (existing may be null) or {@link Verdict#TAKE_OVER}.
     *
     * @param existing the record the store holds for the key, or {@code null} when it holds none
     * @param request  the claim
     * @param verdict  the verdict of {@link #judge}, or {@link Verdict#FRESH} when there is no record
     * @return the in-progress record to write, with its version one above the existing record's (1 for none)
     */
    public static IdempotencyRecord claimed(IdempotencyRecord existing, ClaimRequest request, Verdict verdict) {
        boolean takeOver = verdict == Verdict.TAKE_OVER;
        boolean keepHistory = existing != null && (takeOver || !existing.isExpired(request.now()));
        return IdempotencyRecord.of(request.scopedKey())
                .status(RecordStatus.IN_PROGRESS)
                .fingerprint(request.fingerprint())
                .requestType(request.requestType())
                .attempts(keepHistory ? existing.attempts() + 1 : 1)
                .firstSeen(keepHistory ? existing.firstSeen() : request.now())
                .lastSeen(request.now())
                .expiresAt(takeOver ? existing.expiresAt() : request.expiresAt())
                .leaseUntil(request.leaseUntil())
                .owner(request.owner())
                .version(existing == null ? 1 : existing.version() + 1)
                .build();
    }

    /**
     * The ticket for a record just claimed.
     *
     * @param claimed  the record the claim wrote
     * @param takeover whether the claim took over an expired lease
     * @return the ticket holding the record's owner and version
     */
    public static Ticket ticket(IdempotencyRecord claimed, boolean takeover) {
        return new Ticket(claimed.scopedKey(), claimed.owner(), claimed.version(), claimed.leaseUntil(),
                claimed.expiresAt(), claimed.attempts(), takeover, claimed.fingerprint(), claimed.requestType(),
                claimed.firstSeen());
    }
}
