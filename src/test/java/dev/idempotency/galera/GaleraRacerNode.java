package dev.idempotency.galera;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TextCall;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An application JVM of {@link GaleraStoreTest}: its own engine, pool and persistence unit on one Galera database
 * node. Says {@value #READY}; for each line {@code GO <atomic|leased> <key,key,...> <racers per key>} it races that many
 * calls on each key (all at once, policy REJECT), then prints {@code RESULT <receipts> <in progress> <errors>}.
 * Arguments: JDBC URL, user, password, node name.
 */
public final class GaleraRacerNode {

    static final String READY = "RACER-READY";
    static final Policy REJECT = new Policy(Duration.ofHours(1), Duration.ofMinutes(5), false, Duration.ZERO, Duration.ofSeconds(1));

    private GaleraRacerNode() {
    }

    public static void main(String[] args) throws Exception {
        JtaEnvironment env = new JtaEnvironment(args[0], args[1], args[2], Map.of(), 20, false);
        IdempotencyEngine engine = new IdempotencyEngine(env.store, Clock.systemUTC(), args[3], env.bridge(), new LocalCompletionSignals(),
                Executors.newCachedThreadPool(), Duration.ofSeconds(30), RecordCache.NONE);
        ExecutorService pool = Executors.newFixedThreadPool(48);
        System.out.println(READY);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] go = line.split(" ");
            boolean atomic = go[1].equals("atomic");
            int racers = Integer.parseInt(go[3]);
            AtomicInteger receipts = new AtomicInteger();
            AtomicInteger inProgress = new AtomicInteger();
            AtomicInteger errors = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (String key : go[2].split(",")) {
                for (int r = 0; r < racers; r++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        try {
                            String receipt = call(env, engine, atomic, key, REJECT, () -> charge(env, key));
                            if (receipt.equals("receipt-" + key)) {
                                receipts.incrementAndGet();
                            } else {
                                errors.incrementAndGet();
                            }
                        } catch (IdempotencyInProgressException e) {
                            inProgress.incrementAndGet();
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            e.printStackTrace();
                        }
                        return null;
                    }));
                }
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
            System.out.println("RESULT " + receipts + " " + inProgress + " " + errors);
            System.out.flush();
        }
        pool.shutdownNow();
        env.close();
    }

    /** One payment on an application node with the claim chosen, as the interceptor makes it. */
    static String call(JtaEnvironment env, IdempotencyEngine engine, boolean atomic, String key, Policy policy,
                       java.util.concurrent.Callable<String> charge) throws Exception {
        ScopedKey scoped = new ScopedKey("payments", "anonymous", key);
        if (atomic) {
            AtomicOutcome<String> outcome = engine.runAtomic(scoped, "fp-" + key, null, policy, TextCall.of(charge));
            return outcome instanceof AtomicOutcome.Ran<String> ran ? ran.value()
                    : new String(((AtomicOutcome.Replayed<String>) outcome).record().response(), StandardCharsets.UTF_8);
        }
        Decision decision = engine.begin(scoped, "fp-" + key, null, policy);
        if (decision instanceof Decision.Replay replay) {
            return new String(replay.record().response(), StandardCharsets.UTF_8);
        }
        Ticket ticket = ((Decision.Proceed) decision).ticket();
        env.tm.begin();
        try {
            String receipt = charge.call();
            engine.complete(ticket, receipt.getBytes(StandardCharsets.UTF_8));
            env.tm.commit();
            return receipt;
        } catch (Exception | Error e) {
            if (env.tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
                env.tm.rollback();
            }
            engine.release(ticket);
            throw e;
        }
    }

    /** The business write of one execution: a row of its own, in the call's transaction. */
    static String charge(JtaEnvironment env, String key) throws Exception {
        try (Connection c = env.dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
            ps.setString(1, key + "#" + UUID.randomUUID());
            ps.setLong(2, 100);
            ps.executeUpdate();
        }
        return "receipt-" + key;
    }
}
