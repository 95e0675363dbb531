package dev.idempotency.core;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.ScopedKey;

import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The answers a call gets without running: a replay of a finished record, a key reused for another request, a key in
 * progress with when to retry. Each is logged and counted here, once.
 */
final class Replies {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());
    static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);
    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);

    private final Supplier<EngineObserver> observer;

    Replies(Supplier<EngineObserver> observer) {
        this.observer = observer;
    }

    /**
     * A finished record answers the call: replayed when the fingerprint is the same.
     *
     * @throws IdempotencyKeyReusedException the record is of another request
     */
    Decision.Replay replay(ScopedKey key, IdempotencyRecord record, String fingerprint, long started, boolean fromCache) {
        if (!record.fingerprint().equals(fingerprint)) {
            throw reused(key);
        }
        if (LOG.isLoggable(Level.FINE)) {
            LOG.log(Level.FINE, "Replaying {0} ({1}{2})", new Object[] {key, record.status(), fromCache ? ", from the cache" : ""});
        }
        observer.get().replayed(key, Duration.ofNanos(System.nanoTime() - started), fromCache);
        return new Decision.Replay(record);
    }

    IdempotencyKeyReusedException reused(ScopedKey key) {
        LOG.log(Level.FINE, "Rejected {0}: reused for another request", key);
        observer.get().mismatch(key);
        return new IdempotencyKeyReusedException("The " + key
                + " was already used for a different request; use a new key for a new request");
    }

    /** A duplicate turned away while the first call runs: logged, counted, and the exception to throw. */
    IdempotencyInProgressException rejected(ScopedKey key, Duration leaseLeft) {
        LOG.log(Level.FINE, "Rejected {0}: in progress", key);
        observer.get().conflict(key);
        return inProgress(key, leaseLeft);
    }

    /**
     * A failure the method kept, not stored because another call's row of the key came first: that row is the key's, and
     * the caller gets its answer (a replay) when it is finished, "reused" when it is another request's, else "in
     * progress" (its retry gets that call's answer); never the failure, and never a second run of the method in the same
     * call. Not known whether it was stored (the store could not be written, or the transaction ended before the method
     * threw, as at a transaction timeout): the store's failure, and a retry finds out. {@code thrown}, the method's own
     * failure, goes with a refusal for the log.
     *
     * @param claim what storing the failure found: {@link Claim.Existing} or {@link Claim.Busy}; {@code null}: not known
     */
    Decision.Replay failureLost(ScopedKey key, Claim claim, String fingerprint, long started, Clock clock, Throwable thrown) {
        LOG.log(Level.FINE, "{0}: this call''s failure is not kept", key);
        RuntimeException refused;
        if (claim == null) {
            refused = new dev.idempotency.IdempotencyStoreException("Could not keep the failure of the " + key);
        } else if (claim instanceof Claim.Existing existing && !existing.record().fingerprint().equals(fingerprint)) {
            refused = reused(key);
        } else if (claim instanceof Claim.Existing existing && existing.record().isFinished()) {
            return replay(key, existing.record(), fingerprint, started, false);
        } else {
            refused = rejected(key, claim instanceof Claim.Existing existing
                    ? Duration.between(clock.instant(), existing.record().leaseUntil()) : MIN_RETRY_AFTER);
        }
        refused.addSuppressed(thrown);
        throw refused;
    }

    /** Retry after the rest of the lease, in whole seconds, at least 1 and at most 5: most calls end well before. */
    static IdempotencyInProgressException inProgress(ScopedKey key, Duration leaseLeft) {
        Duration retryAfter = retryAfter(leaseLeft);
        return new IdempotencyInProgressException("A request with the " + key
                + " is still in progress; retry after " + retryAfter.toSeconds() + " s", retryAfter);
    }

    static Duration retryAfter(Duration leaseLeft) {
        Duration rounded = Duration.ofSeconds(leaseLeft.toSeconds() + (leaseLeft.toNanosPart() > 0 ? 1 : 0));
        return rounded.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER
                : rounded.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : rounded;
    }
}
