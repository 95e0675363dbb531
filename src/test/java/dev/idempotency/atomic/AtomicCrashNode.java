package dev.idempotency.atomic;

import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.testing.JtaEnvironment;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;

/**
 * The JVM that {@link AtomicClaimContract} kills: claims a key atomically, writes its business row in the
 * same transaction, says {@value #WROTE}, and never commits. Arguments: JDBC URL, user, password, key.
 */
public final class AtomicCrashNode {

    static final String WROTE = "WROTE-BUSINESS-ROW";

    private AtomicCrashNode() {
    }

    public static void main(String[] args) throws Exception {
        JtaEnvironment env = new JtaEnvironment(args[0], args[1], args[2], Map.of(), 4, false);
        IdempotencyEngine engine = new IdempotencyEngine(env.store, Clock.systemUTC(), "doomed-node", env.bridge(),
                new LocalCompletionSignals(), Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE);
        AtomicClaimContract.call(engine, args[3], AtomicClaimContract.WAIT, () -> {
            String receipt = AtomicClaimContract.charge(env.dataSource, args[3], 1);
            System.out.println(WROTE);
            System.out.flush();
            new CountDownLatch(1).await(); // killed here, before the commit
            return receipt;
        });
    }
}
