package dev.idempotency.example;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How often an in-server consumer ran for a key, counted in the server JVM's system properties (a class of the bootstrap
 * loader, so that every deployment sees it and the counts survive a redeployment).
 */
public final class ConsumerRuns {

    static final String RUNS = "it.consumer.runs.";

    private ConsumerRuns() {
    }

    /** The runs of a key by one consumer (owner). */
    public static AtomicLong runs(String owner, String key) {
        return (AtomicLong) System.getProperties().computeIfAbsent(RUNS + owner + "." + key, k -> new AtomicLong());
    }
}
