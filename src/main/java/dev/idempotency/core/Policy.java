package dev.idempotency.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How the engine treats one operation's keys.
 *
 * @param ttl         how long a finished record is replayed
 * @param lease       how long a claim holds the key before another caller may take over
 * @param waitForResult whether a duplicate waits for a running first call (otherwise it is rejected)
 * @param waitTimeout how long a duplicate waits at most
 */
public record Policy(Duration ttl, Duration lease, boolean waitForResult, Duration waitTimeout) {
    public Policy {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(waitTimeout, "waitTimeout");
        if (ttl.isNegative() || ttl.isZero() || lease.isNegative() || lease.isZero() || waitTimeout.isNegative()) {
            throw new IllegalArgumentException("ttl and lease must be positive, waitTimeout zero or more");
        }
    }
}
