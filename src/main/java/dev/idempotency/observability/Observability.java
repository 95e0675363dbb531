package dev.idempotency.observability;

import dev.idempotency.core.EngineObserver;
import dev.idempotency.events.Conflicted;
import dev.idempotency.events.IdempotencyEvent;
import dev.idempotency.events.Mismatched;
import dev.idempotency.events.Replayed;
import dev.idempotency.events.TakenOver;
import dev.idempotency.metrics.IdempotencyMetrics;
import dev.idempotency.metrics.IdempotencyMetrics.Counter;
import dev.idempotency.metrics.IdempotencyMetrics.Timer;
import dev.idempotency.spi.ScopedKey;

import jakarta.enterprise.event.Event;

import java.time.Clock;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The engine's decisions, made visible: the counters and timers ({@link IdempotencyMetrics}, and
 * MicroProfile Metrics when the server has it), and CDI events on replay, conflict, mismatch and take-over,
 * fired both synchronously and asynchronously.
 */
public final class Observability implements EngineObserver {

    private static final Logger LOG = Logger.getLogger(Observability.class.getName());

    /** Where counters also go: MicroProfile Metrics, OpenTelemetry, when the server has them. */
    public interface Publisher {
        void increment(String namespace, Counter counter);

        void record(String namespace, Timer timer, Duration duration);
    }

    /** The current trace, told each decision (OpenTelemetry, when the server has it). */
    public interface Trace {
        /**
         * @param outcome   one of {@link #EXECUTED}, {@code replayed}, {@code conflict}, {@code mismatch},
         *                  {@code key_missing}, {@code key_invalid}, {@code store_unavailable}
         * @param fromCache for a replay, whether the cache answered; else {@code null}
         */
        void decided(String namespace, String outcome, Boolean fromCache);
    }

    static final String EXECUTED = "executed";

    private final IdempotencyMetrics metrics;
    private final java.util.List<Publisher> publishers;
    private final Trace trace;
    private final Event<IdempotencyEvent> events;
    private final Clock clock;

    /**
     * @param publishers where counters and timers also go (none, one or both of MicroProfile Metrics and OpenTelemetry)
     * @param trace      the current span, or {@code null}
     */
    public Observability(IdempotencyMetrics metrics, java.util.List<Publisher> publishers, Trace trace, Event<IdempotencyEvent> events, Clock clock) {
        this.metrics = metrics;
        this.publishers = java.util.List.copyOf(publishers);
        this.trace = trace;
        this.events = events;
        this.clock = clock;
    }

    private void count(String namespace, Counter counter) {
        metrics.increment(namespace, counter);
        for (Publisher publisher : publishers) {
            try {
                publisher.increment(namespace, counter);
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not publish a counter", e);
            }
        }
    }

    private void time(String namespace, Timer timer, Duration duration) {
        metrics.record(namespace, timer, duration);
        for (Publisher publisher : publishers) {
            try {
                publisher.record(namespace, timer, duration);
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not publish a timer", e);
            }
        }
    }

    private void trace(String namespace, String outcome, Boolean fromCache) {
        if (trace != null) {
            try {
                trace.decided(namespace, outcome, fromCache);
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.FINE, "Could not record the decision on the current span", e);
            }
        }
    }

    private void fire(IdempotencyEvent event) {
        try {
            events.fire(event);
            events.fireAsync(event);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "An observer of " + event.getClass().getSimpleName() + " failed", e);
        }
    }

    @Override
    public void executed(ScopedKey key, Duration claim, boolean takeover) {
        count(key.namespace(), Counter.EXECUTED);
        time(key.namespace(), Timer.CLAIM, claim);
        trace(key.namespace(), EXECUTED, null);
        if (takeover) {
            count(key.namespace(), Counter.TAKEOVERS);
            fire(new TakenOver(key.namespace(), key.principal(), key.key(), clock.instant()));
        }
    }

    @Override
    public void replayed(ScopedKey key, Duration replay, boolean fromCache) {
        count(key.namespace(), Counter.REPLAYED);
        time(key.namespace(), Timer.REPLAY, replay);
        trace(key.namespace(), "replayed", fromCache);
        fire(new Replayed(key.namespace(), key.principal(), key.key(), clock.instant(), fromCache));
    }

    @Override
    public void conflict(ScopedKey key) {
        count(key.namespace(), Counter.CONFLICTS);
        trace(key.namespace(), "conflict", null);
        fire(new Conflicted(key.namespace(), key.principal(), key.key(), clock.instant()));
    }

    @Override
    public void mismatch(ScopedKey key) {
        count(key.namespace(), Counter.MISMATCHES);
        trace(key.namespace(), "mismatch", null);
        fire(new Mismatched(key.namespace(), key.principal(), key.key(), clock.instant()));
    }

    @Override
    public void completed(ScopedKey key, Duration completion, boolean failed) {
        time(key.namespace(), Timer.COMPLETION, completion);
    }

    @Override
    public void released(ScopedKey key) {
        count(key.namespace(), Counter.RELEASED);
    }

    @Override
    public void keyRejected(String namespace, boolean missing) {
        count(namespace, missing ? Counter.KEYS_MISSING : Counter.KEYS_MALFORMED);
        trace(namespace, missing ? "key_missing" : "key_invalid", null);
    }

    @Override
    public void storeError(String namespace, RuntimeException error) {
        count(namespace, Counter.STORE_ERRORS);
        trace(namespace, "store_unavailable", null);
    }
}
