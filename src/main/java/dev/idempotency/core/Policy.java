package dev.idempotency.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How the engine treats one operation's keys.
 *
 * @param ttl              how long a finished record is replayed
 * @param lease            how long a leased claim holds the key before another caller may take over
 * @param waitForResult    whether a duplicate waits for a running first call (otherwise it is rejected)
 * @param waitTimeout      how long a duplicate waits at most
 * @param claimLockTimeout atomic claims: how long one claim statement waits on the database for another
 *                         transaction's uncommitted claim of the same key before the duplicate is told "in
 *                         progress" (or, when it waits, lets go of its connection and waits for a wake-up)
 */
public record Policy(Duration ttl, Duration lease, boolean waitForResult, Duration waitTimeout, Duration claimLockTimeout) {

    /** The default claim lock timeout: one second. */
    public static final Duration DEFAULT_CLAIM_LOCK_TIMEOUT = Duration.ofSeconds(1);

    public Policy {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(waitTimeout, "waitTimeout");
        Objects.requireNonNull(claimLockTimeout, "claimLockTimeout");
        if (ttl.isNegative() || ttl.isZero() || lease.isNegative() || lease.isZero() || waitTimeout.isNegative()
                || claimLockTimeout.isNegative()) {
            throw new IllegalArgumentException("ttl and lease must be positive, waitTimeout and claimLockTimeout zero or more");
        }
    }

    public Policy(Duration ttl, Duration lease, boolean waitForResult, Duration waitTimeout) {
        this(ttl, lease, waitForResult, waitTimeout, DEFAULT_CLAIM_LOCK_TIMEOUT);
    }
}
