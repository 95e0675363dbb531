package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.Ticket;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Renews the leases of this node's running leased claims, so that a live holder never loses its claim: every third of
 * the lease, fenced by owner, version and status, until the claim is settled, for at most a limit after the claim and
 * never past the record's time to live.
 */
final class LeaseHeartbeats {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final IdempotencyStore store;
    private final Clock clock;
    private final Supplier<EngineObserver> observer;
    /** null: leases are not renewed. */
    private volatile ScheduledExecutorService renewals;
    private volatile Duration limit = Duration.ZERO;
    /** The heartbeat of each leased claim this node holds and has not settled. */
    private final ConcurrentHashMap<Ticket, Future<?>> heartbeats = new ConcurrentHashMap<>();

    LeaseHeartbeats(IdempotencyStore store, Clock clock, Supplier<EngineObserver> observer) {
        this.store = store;
        this.clock = clock;
        this.observer = observer;
    }

    /** See {@link IdempotencyEngine#renewLeasesWith}. */
    void renewWith(ScheduledExecutorService scheduler, Duration limit) {
        this.limit = limit;
        this.renewals = limit.isZero() ? null : scheduler;
        if (renewals == null) {
            heartbeats.keySet().forEach(this::stop);
        }
    }

    /** Renews the ticket's lease every third of the lease while its operation runs. */
    void start(Ticket ticket, Duration lease) {
        ScheduledExecutorService scheduler = renewals;
        if (scheduler == null) {
            return;
        }
        long period = Math.max(1, lease.toMillis() / 3);
        Instant until = Durations.min(clock.instant().plus(limit), ticket.expiresAt());
        try {
            heartbeats.put(ticket, scheduler.scheduleWithFixedDelay(() -> renew(ticket, lease, until), period, period, TimeUnit.MILLISECONDS));
        } catch (RejectedExecutionException e) {
            LOG.log(Level.WARNING, "Could not schedule the lease renewal of " + ticket.scopedKey()
                    + "; a call that outlives its lease may be taken over", e);
        }
    }

    void stop(Ticket ticket) {
        Future<?> heartbeat = heartbeats.remove(ticket);
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
    }

    int count() {
        return heartbeats.size();
    }

    /**
     * One heartbeat: the lease renewed, fenced; stops when the claim is lost or finished, or at {@code until} (the
     * renewal limit or the time to live).
     */
    private void renew(Ticket ticket, Duration lease, Instant until) {
        if (!heartbeats.containsKey(ticket)) {
            return;
        }
        Instant now = clock.instant();
        if (!now.isBefore(until)) {
            LOG.log(Level.WARNING, "Stopped renewing the lease of {0}: its call has run past idempotency.lease-renewal-limit"
                    + " or its time to live; it may be taken over when its lease ends", ticket.scopedKey());
            stop(ticket);
            return;
        }
        try {
            if (store.renew(ticket, Durations.min(now.plus(lease), ticket.expiresAt()))) {
                LOG.log(Level.FINEST, "Renewed the lease of {0}", ticket.scopedKey());
            } else if (heartbeats.containsKey(ticket)) {
                // Finished in the meantime (the completion won the race), or taken over after a missed renewal.
                LOG.log(Level.FINE, "Stopped renewing the lease of {0}: no longer held as claimed", ticket.scopedKey());
                stop(ticket);
            }
        } catch (UnsupportedOperationException e) {
            LOG.log(Level.FINE, "{0} does not renew leases", store.getClass().getName());
            stop(ticket);
        } catch (RuntimeException e) {
            // The next heartbeat tries again; two missed in a row and the lease may end.
            observer.get().storeError(ticket.scopedKey().namespace(), e);
            LOG.log(Level.WARNING, "Could not renew the lease of " + ticket.scopedKey() + "; trying again in a third of the lease", e);
        }
    }
}
