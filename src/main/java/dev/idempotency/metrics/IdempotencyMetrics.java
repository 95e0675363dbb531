package dev.idempotency.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The library's counters and timers, per namespace (never per key), kept in memory whatever the server
 * offers; published to MicroProfile Metrics too when the server has it. A CDI bean: inject it to read them.
 */
public final class IdempotencyMetrics {

    /** The counters of one namespace. */
    public enum Counter {
        /** Operations run (new keys and take-overs). */
        EXECUTED("Operations run (new keys and take-overs)"),
        /** Duplicates answered with the stored outcome. */
        REPLAYED("Duplicates answered with the stored outcome"),
        /** Duplicates turned away while the first was running. */
        CONFLICTS("Duplicates turned away while the first was running"),
        /** Keys reused with another request. */
        MISMATCHES("Keys reused with another request"),
        /** Requests without a key where one was required. */
        KEYS_MISSING("Requests without a key where one was required"),
        /** Requests with a malformed key. */
        KEYS_MALFORMED("Requests with a malformed key"),
        /** Store failures. */
        STORE_ERRORS("Store failures"),
        /** Take-overs of expired leases. */
        TAKEOVERS("Take-overs of expired leases"),
        /** Keys released after a failure or a rollback. */
        RELEASED("Keys released after a failure or a rollback");

        private final String description;

        Counter(String description) {
            this.description = description;
        }

        /**
         * What it counts or times, in a few words.
         *
         * @return the description published with the metric
         */
        public String description() {
            return description;
        }
    }

    /** The timers of one namespace. */
    public enum Timer {
        /** The store's claim. */
        CLAIM("The store's claim"),
        /** The store's completion. */
        COMPLETION("The store's completion"),
        /** Answering a duplicate. */
        REPLAY("Answering a duplicate");

        private final String description;

        Timer(String description) {
            this.description = description;
        }

        /**
         * What it counts or times, in a few words.
         *
         * @return the description published with the metric
         */
        public String description() {
            return description;
        }
    }

    /**
     * A timer's state: how many, their total and their maximum.
     *
     * @param count how many durations were recorded
     * @param total the sum of the recorded durations
     * @param max   the longest recorded duration
     */
    public record TimerSnapshot(long count, Duration total, Duration max) {
    }

    /**
     * One namespace's counters and timers at a moment.
     *
     * @param counters the value of every counter
     * @param timers   the state of every timer
     */
    public record Snapshot(Map<Counter, Long> counters, Map<Timer, TimerSnapshot> timers) {
        /**
         * One counter's value.
         *
         * @param c the counter
         * @return its value, 0 when the snapshot does not hold it
         */
        public long count(Counter c) {
            return counters.getOrDefault(c, 0L);
        }
    }

    private final Map<String, Namespace> namespaces = new ConcurrentHashMap<>();

    /**
     * Adds one to a counter of a namespace.
     *
     * @param namespace the operation's namespace
     * @param counter   the counter
     */
    public void increment(String namespace, Counter counter) {
        namespace(namespace).counters[counter.ordinal()].increment();
    }

    /**
     * Records a duration in a timer of a namespace.
     *
     * @param namespace the operation's namespace
     * @param timer     the timer
     * @param duration  the duration measured
     */
    public void record(String namespace, Timer timer, Duration duration) {
        namespace(namespace).timers[timer.ordinal()].record(duration.toNanos());
    }

    /**
     * The snapshot of one namespace (all zero when it has seen nothing).
     *
     * @param namespace the operation's namespace
     * @return every counter and timer of the namespace, read now
     */
    public Snapshot snapshot(String namespace) {
        Namespace n = namespaces.get(namespace);
        Map<Counter, Long> counters = new TreeMap<>();
        Map<Timer, TimerSnapshot> timers = new TreeMap<>();
        for (Counter c : Counter.values()) {
            counters.put(c, n == null ? 0 : n.counters[c.ordinal()].sum());
        }
        for (Timer t : Timer.values()) {
            timers.put(t, n == null ? new TimerSnapshot(0, Duration.ZERO, Duration.ZERO) : n.timers[t.ordinal()].snapshot());
        }
        return new Snapshot(counters, timers);
    }

    /**
     * The namespaces seen so far.
     *
     * @return an unmodifiable view of the namespaces with a counter or timer
     */
    public java.util.Set<String> namespaces() {
        return java.util.Collections.unmodifiableSet(namespaces.keySet());
    }

    private Namespace namespace(String name) {
        Namespace n = namespaces.get(name);
        return n != null ? n : namespaces.computeIfAbsent(name, k -> new Namespace());
    }

    private static final class Namespace {
        final LongAdder[] counters = new LongAdder[Counter.values().length];
        final TimerState[] timers = new TimerState[Timer.values().length];

        Namespace() {
            for (int i = 0; i < counters.length; i++) {
                counters[i] = new LongAdder();
            }
            for (int i = 0; i < timers.length; i++) {
                timers[i] = new TimerState();
            }
        }
    }

    private static final class TimerState {
        final LongAdder count = new LongAdder();
        final LongAdder total = new LongAdder();
        final java.util.concurrent.atomic.LongAccumulator max = new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);

        void record(long nanos) {
            count.increment();
            total.add(nanos);
            max.accumulate(nanos);
        }

        TimerSnapshot snapshot() {
            return new TimerSnapshot(count.sum(), Duration.ofNanos(total.sum()), Duration.ofNanos(max.get()));
        }
    }
}
