package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.Idempotent;
import dev.idempotency.OnConcurrent;
import dev.idempotency.testing.ConnectionCensus;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import io.agroal.api.AgroalDataSource;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * "Always answers": more concurrent first calls than the pool has connections (a pool of {@value #POOL}, {@value #CALLS}
 * calls, each holding its business connection for {@value #WORK_MILLIS} ms inside its transaction, as a JPA provider
 * holds its connection until the commit). Every call is answered, every one runs once, and no transaction is handed a
 * second physical connection (counted by {@link ConnectionCensus} in front of the Agroal pool).
 */
abstract class PoolStarvationContract {

    static final int POOL = 4;
    static final int CALLS = 40;
    static final long WORK_MILLIS = 200;

    static TestDatabase current;
    static ConnectionCensus census;
    static int poolSize = POOL;

    abstract TestDatabase database();

    WeldContainer container;

    @ApplicationScoped
    public static class Resources {
        @Produces
        @ForIdempotency
        @ApplicationScoped
        DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
            // The pool's own acquisition timeout is long (30 s): a quick answer is the library's bound, not the pool's.
            AgroalDataSource pool = JtaEnvironment.dataSource(current.url, current.user, current.password, tm, tsr, poolSize, false,
                    Duration.ofSeconds(30));
            census = new ConnectionCensus(pool, tsr);
            return census;
        }

        void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
            ds.unwrap(AgroalDataSource.class).close();
        }
    }

    /** The business work: one row, its connection held for the work's time. */
    @ApplicationScoped
    public static class Ledger {
        final AtomicInteger executions = new AtomicInteger();

        @Inject
        @ForIdempotency
        DataSource dataSource;

        String charge(String key) throws SQLException, InterruptedException {
            executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 100)")) {
                ps.setString(1, key + "-" + java.util.UUID.randomUUID());
                ps.executeUpdate();
                Thread.sleep(WORK_MILLIS);
            }
            return "paid " + key;
        }

        int executions() {
            return executions.get();
        }
    }

    /** No caller transaction: an atomic claim begins one around the call. */
    @ApplicationScoped
    public static class Plain {
        @Inject
        Ledger ledger;

        @Idempotent
        public String pay(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }

        @Idempotent(onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT60S")
        public String payOrWait(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }

        @Idempotent(onConcurrent = OnConcurrent.REJECT)
        public String payOrReject(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }
    }

    /** Inside the caller's {@code @Transactional}. */
    @ApplicationScoped
    public static class InTransaction {
        @Inject
        Ledger ledger;

        @Transactional
        @Idempotent
        public String pay(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }

        @Transactional
        @Idempotent(onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT60S")
        public String payOrWait(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }

        @Transactional
        @Idempotent(onConcurrent = OnConcurrent.REJECT)
        public String payOrReject(@IdempotencyKey String key) throws Exception {
            return ledger.charge(key);
        }
    }

    @BeforeEach
    void available() {
        database().assumeAvailable();
        current = database();
        poolSize = POOL;
    }

    void boot(String claim, Map<String, String> extra) {
        database().reset();
        Map<String, String> config = new HashMap<>(Map.of("idempotency.claim", claim));
        config.putAll(extra);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, Resources.class, Ledger.class, Plain.class, InTransaction.class)
                .addExtension(new TransactionExtension())
                .initialize();
        container.select(Plain.class).get(); // the data source and the library start before the clock runs
        census.reset();
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
    }

    /** Starts all calls at once on threads of their own, and gathers each one's answer or exception. */
    static List<Object> race(int calls, java.util.function.IntFunction<Callable<String>> call) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(calls);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Object>> futures = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                Callable<String> c = call.apply(i);
                futures.add(threads.submit(() -> {
                    start.await();
                    try {
                        return c.call();
                    } catch (Exception e) {
                        return e;
                    }
                }));
            }
            start.countDown();
            List<Object> answers = new ArrayList<>();
            for (Future<Object> f : futures) {
                answers.add(f.get(120, TimeUnit.SECONDS));
            }
            return answers;
        } finally {
            threads.shutdownNow();
        }
    }

    long payments() {
        return database().count("select count(*) from test_payment");
    }

    @ParameterizedTest(name = "{0} claim, caller''s transaction: {1}")
    @CsvSource({"atomic, false", "atomic, true", "leased, false", "leased, true", "optimistic, false", "optimistic, true"})
    void aBurstOfDistinctKeysLargerThanThePoolIsServedInFull(String claim, boolean callersTransaction) throws Exception {
        boot(claim, Map.of());
        Plain plain = container.select(Plain.class).get();
        InTransaction inTransaction = container.select(InTransaction.class).get();
        List<Object> answers = race(CALLS, i -> () -> callersTransaction ? inTransaction.pay("k-" + i) : plain.pay("k-" + i));
        for (int i = 0; i < CALLS; i++) {
            assertThat(answers.get(i)).as("call %d", i).isEqualTo("paid k-" + i);
        }
        assertThat(container.select(Ledger.class).get().executions()).isEqualTo(CALLS);
        assertThat(payments()).isEqualTo(CALLS);
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(CALLS);
        assertThat(census.mostPhysicalInOneTransaction()).as("physical connections one transaction held").isEqualTo(1);
        System.out.printf("POOL-STARVATION %s %s claim=%s callersTransaction=%s: %d calls on a pool of %d answered;"
                        + " most handles one transaction asked for: %d; handles outside transactions: %d; transactions: %d%n",
                getClass().getSimpleName(), database(), claim, callersTransaction, CALLS, POOL,
                census.mostHandlesInOneTransaction(), census.handlesOutsideTransactions(), census.transactions());
    }

    @ParameterizedTest(name = "{0} claim, caller''s transaction: {1}, {2}")
    @CsvSource({"atomic, false, WAIT", "atomic, true, WAIT", "atomic, false, REJECT", "atomic, true, REJECT",
            "leased, false, WAIT", "leased, true, WAIT", "leased, false, REJECT", "leased, true, REJECT",
            "optimistic, false, WAIT", "optimistic, true, WAIT", "optimistic, false, REJECT", "optimistic, true, REJECT"})
    void racingDuplicatesLargerThanThePoolRunOncePerKey(String claim, boolean callersTransaction, OnConcurrent onConcurrent)
            throws Exception {
        boot(claim, Map.of());
        Plain plain = container.select(Plain.class).get();
        InTransaction inTransaction = container.select(InTransaction.class).get();
        int keys = 8;
        List<Object> answers = race(CALLS, i -> () -> {
            String key = "d-" + (i % keys);
            if (onConcurrent == OnConcurrent.WAIT) {
                return callersTransaction ? inTransaction.payOrWait(key) : plain.payOrWait(key);
            }
            return callersTransaction ? inTransaction.payOrReject(key) : plain.payOrReject(key);
        });
        for (int i = 0; i < CALLS; i++) {
            Object answer = answers.get(i);
            if (onConcurrent == OnConcurrent.WAIT) {
                assertThat(answer).as("call %d", i).isEqualTo("paid d-" + (i % keys));
            } else if (!(answer instanceof IdempotencyInProgressException)) {
                assertThat(answer).as("call %d: the answer or 'in progress'", i).isEqualTo("paid d-" + (i % keys));
            }
        }
        assertThat(container.select(Ledger.class).get().executions()).as("one execution per key").isEqualTo(keys);
        assertThat(payments()).isEqualTo(keys);
        assertThat(census.mostPhysicalInOneTransaction()).as("physical connections one transaction held").isEqualTo(1);
    }

    @Test
    void aCallThatFindsThePoolExhaustedIsAnsweredWithinTheLibrarysBoundAndLeavesItsKeyFree() throws Exception {
        poolSize = 1;
        boot("atomic", Map.of("idempotency.connection-timeout", "PT1S"));
        Plain plain = container.select(Plain.class).get();
        DataSource pool = container.select(DataSource.class, ForIdempotency.Literal.INSTANCE).get();
        long started;
        try (Connection taken = pool.getConnection()) {
            assertThat(taken.isValid(5)).isTrue();
            started = System.nanoTime();
            assertThatThrownBy(() -> plain.pay("exhausted"))
                    .isInstanceOf(IdempotencyStoreException.class)
                    .hasStackTraceContaining("idempotency.connection-timeout");
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - started);
        assertThat(waited).as("answered by the library's bound (1 s), not the pool's (30 s)").isLessThan(Duration.ofSeconds(15));
        assertThat(container.select(Ledger.class).get().executions()).as("the work did not run").isEqualTo(0);
        assertThat(database().count("select count(*) from idempotency_record")).as("nothing left claimed").isZero();
        assertThat(plain.pay("exhausted")).as("the key is free").isEqualTo("paid exhausted");
        assertThat(container.select(Ledger.class).get().executions()).isEqualTo(1);
    }
}
