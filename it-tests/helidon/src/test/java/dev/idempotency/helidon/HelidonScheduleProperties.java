package dev.idempotency.helidon;

import dev.idempotency.IdempotencyInProgressException;

import com.zaxxer.hikari.HikariDataSource;

import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.enterprise.inject.se.SeContainer;
import jakarta.enterprise.inject.se.SeContainerInitializer;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Generated schedules of calls on Helidon MP: each step calls one door (the interceptor in each claim mode with writes
 * in JDBC or through the JPA unit, and the functional API) for one of a few keys, once or as a burst of duplicates at
 * once, and may make the running call fail after its write. After every step the contract is checked against what was
 * committed:
 * <ul>
 *   <li>every answer of a key is its first answer;</li>
 *   <li>a key has one business row once answered, none before, and the business code ran once more than it failed;</li>
 *   <li>an atomic or optimistic claim's record is there exactly when its business row is (a rollback leaves neither);</li>
 *   <li>an atomic call's run sees its claim's record in its own transaction (one connection for both);</li>
 *   <li>some call of each step runs or is answered (never all refused as in progress);</li>
 *   <li>no connection is left out of the pool.</li>
 * </ul>
 * The container is started once for all tries (Helidon starts one per JVM; the pom runs this class in a JVM of its
 * own).
 */
class HelidonScheduleProperties {

    private static SeContainer container;
    private static Charges charges;
    private static JpaPayments payments;
    private static Ledger ledger;
    private static HikariDataSource pool;
    private static final AtomicInteger TRIES = new AtomicInteger();
    /** This run's keys' prefix: a database (PostgreSQL's) keeps the rows of earlier runs. */
    private static final String RUN = java.util.UUID.randomUUID().toString().substring(0, 8);

    @BeforeContainer
    static void start() throws java.sql.SQLException {
        container = SeContainerInitializer.newInstance().initialize();
        charges = container.select(Charges.class).get();
        payments = container.select(JpaPayments.class).get();
        ledger = container.select(Ledger.class).get();
        pool = container.select(DataSource.class, NamedLiteral.of("payments")).get().unwrap(HikariDataSource.class);
    }

    @AfterContainer
    static void stop() {
        if (container != null) {
            container.close();
        }
    }

    /** How a step reaches the library. */
    enum Door {
        ATOMIC(true), OPTIMISTIC(true), LEASED(false), FUNCTIONAL(true), JPA_ATOMIC(true), JPA_OPTIMISTIC(true);

        /** Whether the claim's record commits or rolls back with the business row. */
        final boolean recordWithRow;

        Door(boolean recordWithRow) {
            this.recordWithRow = recordWithRow;
        }

        /**
         * For an atomic claim, the key's claim records that its last run saw in its own transaction (through the
         * {@code @ForIdempotency DataSource} or the JPA unit's entity manager): 1 when both are on one connection.
         */
        Integer claimsSeen(String key) {
            return switch (this) {
                case ATOMIC, FUNCTIONAL -> charges.inside(key) == null ? null : charges.inside(key).records();
                case JPA_ATOMIC -> payments.claimsSeen(key);
                default -> null;
            };
        }

        Receipt call(String key) throws Exception {
            return switch (this) {
                case ATOMIC -> charges.atomic(key, 100);
                case OPTIMISTIC -> charges.optimistic(key, 100);
                case LEASED -> charges.leased(key, 100);
                case FUNCTIONAL -> charges.functional(key, 100);
                case JPA_ATOMIC -> payments.atomic(key, 100);
                case JPA_OPTIMISTIC -> payments.optimistic(key, 100);
            };
        }

        void failNext(String key) {
            if (this == JPA_ATOMIC || this == JPA_OPTIMISTIC) {
                payments.failNext(key);
            } else {
                charges.failNext(key);
            }
        }

        void cancelFailure(String key) {
            payments.cancelFailure(key);
            charges.cancelFailure(key);
        }

        int rows(String key) {
            return this == JPA_ATOMIC || this == JPA_OPTIMISTIC ? ledger.payments(key) : ledger.rows(key);
        }
    }

    /** One step: a door, one of three keys, whether the call that runs fails after its write, how many duplicates at once. */
    record Step(Door door, int key, boolean fails, int duplicates) {
    }

    @Provide
    Arbitrary<List<Step>> schedules() {
        Arbitrary<Step> step = Combinators.combine(Arbitraries.of(Door.class), Arbitraries.integers().between(0, 2),
                Arbitraries.of(false, false, true), Arbitraries.of(1, 1, 4)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(12);
    }

    @Property
    void everyRetryIsAnsweredTheFirstAnswerAndTheWorkRunsOnce(@ForAll("schedules") List<Step> schedule) throws Exception {
        String prefix = RUN + "-s" + TRIES.incrementAndGet() + "-";
        Map<String, Receipt> first = new HashMap<>();
        Map<String, Integer> failed = new HashMap<>();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            for (Step step : schedule) {
                String key = prefix + step.door() + "-" + step.key();
                if (step.fails()) {
                    step.door().failNext(key);
                }
                int runsBefore = ledger.runs(key);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Receipt>> calls = new ArrayList<>();
                for (int i = 0; i < step.duplicates(); i++) {
                    calls.add(callers.submit(() -> {
                        go.await();
                        return step.door().call(key);
                    }));
                }
                go.countDown();
                int inProgress = 0;
                for (Future<Receipt> call : calls) {
                    try {
                        Receipt answer = call.get(60, TimeUnit.SECONDS);
                        Receipt known = first.putIfAbsent(key, answer);
                        if (known != null && !known.equals(answer)) {
                            throw new AssertionError(step + ": answered " + answer + " after the first answer " + known);
                        }
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof Charges.CardDeclined) {
                            failed.merge(key, 1, Integer::sum);
                        } else if (e.getCause() instanceof IdempotencyInProgressException) {
                            inProgress++;
                        } else {
                            throw new AssertionError(step + ": neither an answer, the run's failure nor 'in progress'", e.getCause());
                        }
                    }
                }
                step.door().cancelFailure(key); // a failure asked for but met by no run (the key was answered)
                if (inProgress == calls.size()) {
                    // each step's calls end before the next step: one of them, at least, runs or is answered
                    throw new AssertionError(step + ": every call was refused as in progress, with none running");
                }
                Integer seen = step.door().claimsSeen(key);
                if (ledger.runs(key) > runsBefore && seen != null && seen != 1) {
                    throw new AssertionError(step + ": the run saw " + seen + " claim records in its transaction: the claim "
                            + "and the business write are not on one connection");
                }
                check(step, key, first.get(key), failed.getOrDefault(key, 0));
            }
        } finally {
            callers.shutdownNow();
        }
    }

    private static void check(Step step, String key, Receipt answered, int failures) throws InterruptedException {
        int rows = step.door().rows(key);
        int expectedRows = answered == null ? 0 : 1;
        if (rows != expectedRows) {
            throw new AssertionError(step + ": " + rows + " business rows, " + (answered == null ? "never answered" : "answered " + answered));
        }
        int runs = ledger.runs(key);
        if (runs != failures + expectedRows) {
            throw new AssertionError(step + ": the business code ran " + runs + " times for " + failures + " failures and "
                    + expectedRows + " answer");
        }
        int records = ledger.records(key);
        if (step.door().recordWithRow ? records != rows : answered != null && records != 1) {
            throw new AssertionError(step + ": " + records + " records for " + rows + " business rows");
        }
        // the transaction's connection goes back to the pool when the transaction completes, maybe on another thread
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (pool.getHikariPoolMXBean().getActiveConnections() > 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        int active = pool.getHikariPoolMXBean().getActiveConnections();
        if (active > 0) {
            throw new AssertionError(step + ": " + active + " connections left out of the pool");
        }
    }
}
