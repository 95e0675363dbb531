package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyStore;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one clock every node shares: the store's, read with {@link IdempotencyStore#currentTime()}
 * and carried forward between readings by this JVM's monotonic {@link System#nanoTime()}, so that neither a
 * node's wrong wall clock nor a jump of it (NTP stepping it) moves leases or expiry. A reading is taken at
 * start and then every {@code resync}; its error is half the round trip to the database (well under a
 * millisecond on a LAN), against leases of seconds to minutes.
 *
 * <p>Until the first reading succeeds (the store is down at start), or for a store that cannot tell its time,
 * it is the node's own clock; the store is asked every second until it answers, so that a node whose clock is off
 * writes leases by it for about a second after the store comes back, not for a whole {@code resync}.
 * {@link #instant()} never does I/O.
 */
public final class StoreClock extends Clock {

    private static final Logger LOG = Logger.getLogger(StoreClock.class.getName());

    private final IdempotencyStore store;
    private final Clock fallback;
    /** The store's time at {@code anchorNanos}; null until the first reading. */
    private volatile Anchor anchor;
    private volatile ScheduledFuture<?> resyncs;
    private volatile boolean warned;

    private record Anchor(Instant time, long nanos) {
    }

    /**
     * @param store    whose time is the shared one
     * @param fallback the node's own clock, used only until the store's time is known
     */
    public StoreClock(IdempotencyStore store, Clock fallback) {
        this.store = Objects.requireNonNull(store, "store");
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    /**
     * How soon the store's time is asked again while it has never been told (the store was down at start): until then
     * leases and expiries follow this node's own clock, which may be off from the others', so that time is kept short.
     */
    static final Duration UNTIL_THE_FIRST_READING = Duration.ofSeconds(1);

    private volatile boolean stopped;

    /**
     * Reads the store's time now, and again every {@code resync} on the scheduler (until {@link #stop()}); every
     * {@link #UNTIL_THE_FIRST_READING} while no reading has succeeded yet.
     */
    public StoreClock start(ScheduledExecutorService scheduler, Duration resync) {
        boolean told = sync();
        next(scheduler, resync, told);
        return this;
    }

    private void next(ScheduledExecutorService scheduler, Duration resync, boolean told) {
        if (stopped) {
            return;
        }
        long delay = Math.max(1, (told || anchor != null ? resync : UNTIL_THE_FIRST_READING).toMillis());
        try {
            resyncs = scheduler.schedule(() -> next(scheduler, resync, sync()), delay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.log(Level.FINE, "The store's clock is not read again: its scheduler has stopped", e);
        }
    }

    public void stop() {
        stopped = true;
        ScheduledFuture<?> r = resyncs;
        if (r != null) {
            r.cancel(false);
        }
    }

    /**
     * One reading of the store's time, placed at the middle of its round trip.
     *
     * @return whether the store told its time
     */
    public boolean sync() {
        try {
            long before = System.nanoTime();
            Instant storeTime = store.currentTime();
            long after = System.nanoTime();
            anchor = new Anchor(storeTime.plusNanos((after - before) / 2), after);
            if (warned) {
                LOG.log(Level.INFO, "The store's clock is read again: leases and expiry follow it");
                warned = false;
            }
            return true;
        } catch (UnsupportedOperationException e) {
            LOG.log(Level.FINE, "{0} cannot tell its time: leases and expiry follow this node''s clock", store.getClass().getName());
            stop();
            return false;
        } catch (RuntimeException e) {
            if (!warned) {
                warned = true;
                LOG.log(Level.WARNING, "Could not read the store's clock; "
                        + (anchor == null ? "this node's own clock is used until it can" : "carrying its last reading forward"), e);
            }
            return false;
        }
    }

    /** How far the store's time is ahead of the node's own clock now (negative: behind); zero before a reading. */
    public Duration offset() {
        return Duration.between(fallback.instant(), instant());
    }

    @Override
    public Instant instant() {
        Anchor a = anchor;
        return a == null ? fallback.instant() : a.time().plusNanos(System.nanoTime() - a.nanos());
    }

    @Override
    public long millis() {
        return instant().toEpochMilli();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("The store's clock is in UTC");
    }
}
