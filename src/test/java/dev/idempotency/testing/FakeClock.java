package dev.idempotency.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that moves only when told to. Thread-safe. */
public final class FakeClock extends Clock {

    private final AtomicReference<Instant> now;

    public FakeClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    public FakeClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    public void advance(Duration d) {
        now.updateAndGet(i -> i.plus(d));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
