package dev.idempotency.core;

import java.time.Duration;
import java.time.Instant;

/** The smaller and the larger of two durations or instants. */
final class Durations {

    private Durations() {
    }

    static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }
}
