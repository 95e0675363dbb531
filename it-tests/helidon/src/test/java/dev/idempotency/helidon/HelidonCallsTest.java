package dev.idempotency.helidon;

import dev.idempotency.IdempotencyInProgressException;

import io.helidon.microprofile.testing.junit5.HelidonTest;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The interceptor and the functional API on Helidon MP (Weld, Narayana, HikariCP): each claim mode runs a key once, and answers every retry
 * with the first answer; an atomic claim joins the method's own {@code @Transactional} (the interceptor runs inside it,
 * by its priority), so that a rollback leaves no record and the retry runs.
 */
@HelidonTest
class HelidonCallsTest {

    private static final int DUPLICATES = 32;

    @Inject
    Charges charges;

    @Inject
    Ledger ledger;

    @Inject
    JpaPayments payments;

    private static String key(String what) {
        return what + "-" + UUID.randomUUID();
    }

    @Test
    void theRecordsAreOnTheProfilesDatabase() {
        String expected = System.getProperty("javax.sql.DataSource.payments.dataSource.url", "").startsWith("jdbc:postgresql:") ? "PostgreSQL" : "H2";
        assertEquals(expected, ledger.database());
    }

    @Test
    void theAtomicClaimIsWrittenInTheMethodsOwnTransaction() {
        String key = key("inside");
        Receipt first = charges.atomicInItsOwnTransaction(key, 100);
        Charges.Inside seen = charges.inside(key);
        assertTrue(seen.transaction(), "the body ran in a transaction");
        assertEquals(1, seen.records(), "the claim's record was visible in the body's transaction: the interceptor ran inside it");
        assertEquals(first, charges.atomicInItsOwnTransaction(key, 100), "a retry is answered the first answer");
        assertEquals(1, ledger.rows(key));
        assertEquals(1, ledger.runs(key));
    }

    @Test
    void aRolledBackAtomicCallLeavesNoRecordAndTheRetryRuns() {
        String key = key("rollback");
        charges.failNext(key);
        assertThrows(Charges.CardDeclined.class, () -> charges.atomic(key, 250));
        assertEquals(0, ledger.rows(key), "the charge rolled back");
        assertEquals(0, ledger.records(key), "its claim rolled back with it");
        Receipt retried = charges.atomic(key, 250);
        assertEquals(2, retried.run(), "the retry ran");
        assertEquals(retried, charges.atomic(key, 250));
        assertEquals(1, ledger.rows(key));
        assertEquals(2, ledger.runs(key));
    }

    @Test
    void aFailedOptimisticCallLeavesNoRecordAndTheRetryRuns() {
        String key = key("optimistic-rollback");
        charges.failNext(key);
        assertThrows(Charges.CardDeclined.class, () -> charges.optimistic(key, 40));
        assertEquals(0, ledger.rows(key));
        assertEquals(0, ledger.records(key));
        assertEquals(2, charges.optimistic(key, 40).run());
        assertEquals(1, ledger.rows(key));
    }

    @Test
    void aFailedLeasedCallIsReleasedAndTheRetryRuns() {
        String key = key("leased-rollback");
        charges.failNext(key);
        assertThrows(Charges.CardDeclined.class, () -> charges.leased(key, 40));
        assertEquals(0, ledger.rows(key));
        Receipt retried = charges.leased(key, 40);
        assertEquals(2, retried.run());
        assertEquals(retried, charges.leased(key, 40));
        assertEquals(1, ledger.rows(key));
    }

    @Test
    void theFunctionalApiRunsOnceInTheCallersTransaction() throws Exception {
        String key = key("functional");
        Receipt first = charges.functional(key, 7);
        assertEquals(1, charges.inside(key).records(), "its claim was written in the caller's transaction");
        assertEquals(first, charges.functional(key, 7));
        assertEquals(1, ledger.rows(key));
        assertEquals(1, ledger.runs(key));
    }

    @Test
    void theApplicationsJpaUnitWritesOnTheAtomicClaimsConnection() {
        String key = key("jpa");
        Receipt first = payments.atomic(key, 60);
        assertEquals(1, payments.claimsSeen(key),
                "the unit's entity manager saw the claim's record before the commit: one connection for both");
        assertEquals(first, payments.atomic(key, 60), "a retry is answered the first answer");
        assertEquals(1, ledger.payments(key));
        assertEquals(1, ledger.runs(key));
    }

    @Test
    void aRolledBackJpaPaymentLeavesNoRecordAndTheRetryRuns() {
        for (String mode : new String[] {"atomic", "optimistic"}) {
            String key = key("jpa-rollback-" + mode);
            BiFunction<String, Long, Receipt> call = mode.equals("atomic") ? payments::atomic : payments::optimistic;
            payments.failNext(key);
            assertThrows(Charges.CardDeclined.class, () -> call.apply(key, 75L));
            assertEquals(0, ledger.payments(key), "the payment rolled back");
            assertEquals(0, ledger.records(key), "its claim rolled back with it");
            Receipt retried = call.apply(key, 75L);
            assertEquals(2, retried.run(), "the retry ran");
            assertEquals(retried, call.apply(key, 75L));
            assertEquals(1, ledger.payments(key));
        }
    }

    @Test
    void racingDuplicatesRunOnceThroughTheJpaUnit() throws Exception {
        race("jpa-atomic", payments::atomic, ledger::payments);
        race("jpa-optimistic", payments::optimistic, ledger::payments);
    }

    @jakarta.inject.Inject
    @jakarta.inject.Named("payments")
    javax.sql.DataSource pool;

    /**
     * Three times as many atomic calls of distinct keys at once as the pool has connections (16), each holding its
     * transaction's one connection until let go: the pool runs dry (callers wait for a connection), and once the held
     * calls are let go every call is answered, one row each, and every connection is back in the pool.
     */
    @Test
    void moreCallsAtOnceThanThePoolHasConnectionsAreAllAnswered() throws Exception {
        com.zaxxer.hikari.HikariPoolMXBean connections = pool.unwrap(com.zaxxer.hikari.HikariDataSource.class).getHikariPoolMXBean();
        int calls = 48;
        java.util.List<String> keys = new java.util.ArrayList<>();
        for (int i = 0; i < calls; i++) {
            String key = key("starved-" + i);
            keys.add(key);
            ledger.hold(key);
        }
        ExecutorService callers = Executors.newFixedThreadPool(calls);
        try {
            java.util.List<Future<Receipt>> answers = new java.util.ArrayList<>();
            for (String key : keys) {
                answers.add(callers.submit(() -> charges.atomic(key, 5)));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (connections.getThreadsAwaitingConnection() == 0 && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertTrue(connections.getThreadsAwaitingConnection() > 0, "the pool ran dry: callers wait for a connection");
            keys.forEach(ledger::release);
            for (int i = 0; i < calls; i++) {
                Receipt answer = answers.get(i).get(60, TimeUnit.SECONDS);
                assertEquals(keys.get(i), answer.key());
                assertEquals(1, ledger.rows(keys.get(i)));
            }
        } finally {
            keys.forEach(ledger::release);
            callers.shutdownNow();
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (connections.getActiveConnections() > 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertEquals(0, connections.getActiveConnections(), "every connection is back in the pool");
    }

    @Test
    void racingDuplicatesRunOnceAtomic() throws Exception {
        race("atomic", (key, amount) -> charges.atomic(key, amount));
    }

    @Test
    void racingDuplicatesRunOnceOptimistic() throws Exception {
        race("optimistic", (key, amount) -> charges.optimistic(key, amount));
    }

    @Test
    void racingDuplicatesRunOnceLeased() throws Exception {
        race("leased", (key, amount) -> charges.leased(key, amount));
    }

    @Test
    void racingDuplicatesRunOnceFunctional() throws Exception {
        race("functional", (key, amount) -> {
            try {
                return charges.functional(key, amount);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * {@value #DUPLICATES} calls of one key at once, while the first runner is held after writing its row: each of the
     * others is refused as in progress while it runs; once it is let go, it and every retry answer its receipt, and
     * there is one business row.
     */
    private void race(String mode, BiFunction<String, Long, Receipt> call) throws Exception {
        race(mode, call, ledger::rows);
    }

    private void race(String mode, BiFunction<String, Long, Receipt> call, java.util.function.ToIntFunction<String> rows) throws Exception {
        String key = key("race-" + mode);
        CountDownLatch firstRuns = ledger.hold(key);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(DUPLICATES);
        try {
            ExecutorCompletionService<Receipt> calls = new ExecutorCompletionService<>(pool);
            for (int i = 0; i < DUPLICATES; i++) {
                calls.submit(() -> {
                    go.await();
                    return call.apply(key, 500L);
                });
            }
            go.countDown();
            assertTrue(firstRuns.await(30, TimeUnit.SECONDS), "one call ran");
            for (int i = 0; i < DUPLICATES - 1; i++) {
                Future<Receipt> done = calls.poll(30, TimeUnit.SECONDS);
                assertNotNull(done, "a duplicate was neither answered nor refused in 30 s");
                ExecutionException refused = assertThrows(ExecutionException.class, done::get,
                        "a duplicate was answered while the first still ran");
                assertInstanceOf(IdempotencyInProgressException.class, refused.getCause(), () -> "refused: " + refused.getCause());
            }
            assertEquals(1, ledger.runs(key), "one call ran while the others were refused");
            ledger.release(key);
            Future<Receipt> first = calls.poll(30, TimeUnit.SECONDS);
            assertNotNull(first, "the first call was answered once let go");
            Receipt winner = first.get();
            for (int i = 0; i < 3; i++) {
                assertEquals(winner, call.apply(key, 500L), "a retry is answered the first answer");
            }
            assertEquals(1, rows.applyAsInt(key), "one business row");
            assertEquals(1, ledger.runs(key), "the business code ran once");
        } finally {
            ledger.release(key);
            pool.shutdownNow();
        }
    }
}
