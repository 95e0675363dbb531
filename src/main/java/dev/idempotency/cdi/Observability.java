package dev.idempotency.cdi;

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
final class Observability implements EngineObserver {

    private static final Logger LOG = Logger.getLogger(Observability.class.getName());

    /** Where counters also go; the MicroProfile Metrics one when present. */
    interface Publisher {
        void increment(String namespace, Counter counter);

        void record(String namespace, Timer timer, Duration duration);
    }

    private final IdempotencyMetrics metrics;
    private final Publisher publisher;
    private final Event<IdempotencyEvent> events;
    private final Clock clock;

    Observability(IdempotencyMetrics metrics, Publisher publisher, Event<IdempotencyEvent> events, Clock clock) {
        this.metrics = metrics;
        this.publisher = publisher;
        this.events = events;
        this.clock = clock;
    }

    private void count(String namespace, Counter counter) {
        metrics.increment(namespace, counter);
        if (publisher != null) {
            try {
                publisher.increment(namespace, counter);
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not publish a counter", e);
            }
        }
    }

    private void time(String namespace, Timer timer, Duration duration) {
        metrics.record(namespace, timer, duration);
        if (publisher != null) {
            try {
                publisher.record(namespace, timer, duration);
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Could not publish a timer", e);
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
        if (takeover) {
            count(key.namespace(), Counter.TAKEOVERS);
            fire(new TakenOver(key.namespace(), key.principal(), key.key(), clock.instant()));
        }
    }

    @Override
    public void replayed(ScopedKey key, Duration replay, boolean fromCache) {
        count(key.namespace(), Counter.REPLAYED);
        time(key.namespace(), Timer.REPLAY, replay);
        fire(new Replayed(key.namespace(), key.principal(), key.key(), clock.instant(), fromCache));
    }

    @Override
    public void conflict(ScopedKey key) {
        count(key.namespace(), Counter.CONFLICTS);
        fire(new Conflicted(key.namespace(), key.principal(), key.key(), clock.instant()));
    }

    @Override
    public void mismatch(ScopedKey key) {
        count(key.namespace(), Counter.MISMATCHES);
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
    }

    @Override
    public void storeError(String namespace, RuntimeException error) {
        count(namespace, Counter.STORE_ERRORS);
    }
}
