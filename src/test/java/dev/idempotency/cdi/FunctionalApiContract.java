package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.ClaimMode;
import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyOptions;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentResult;
import dev.idempotency.OnConcurrent;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * The functional API ({@link Idempotency}) through the same engine as {@code @Idempotent}, with a real JTA stack and
 * database: racing callers, replays (from the cache and, flushed, from the store), misuse refused before anything runs,
 * and the outcome each call can be asked for. Run on H2, PostgreSQL and MariaDB by the subclasses.
 */
abstract class FunctionalApiContract {

    static TestDatabase current;

    abstract TestDatabase database();

    WeldContainer container;

    /** What a payment request is; its JSON is the fingerprint. */
    public record Charge(long amount, String currency) {
    }

    /** What is stored and replayed. */
    public record Receipt(String id, long amount) {
    }

    @ApplicationScoped
    public static class Resources {
        @Produces
        @ForIdempotency
        @ApplicationScoped
        DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
            return JtaEnvironment.dataSource(current.url, current.user, current.password, tm, tsr, 40, false, Duration.ofSeconds(30));
        }

        void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
            ds.unwrap(AgroalDataSource.class).close();
        }
    }

    /** The business work: one payment row in the call's transaction, counted. */
    @ApplicationScoped
    public static class Ledger {
        final AtomicInteger executions = new AtomicInteger();

        @Inject
        @ForIdempotency
        DataSource dataSource;

        Receipt charge(String key, Charge charge, long holdMillis) throws SQLException, InterruptedException {
            int n = executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
                ps.setString(1, key + "#" + n);
                ps.setLong(2, charge.amount());
                ps.executeUpdate();
            }
            Thread.sleep(holdMillis); // the work's length, while the racers arrive
            return new Receipt(key + "#" + n, charge.amount());
        }

        int executions() {
            return executions.get();
        }
    }

    /** An annotated method, for the outcome its callers can ask for. */
    @ApplicationScoped
    public static class Annotated {
        @Inject
        Ledger ledger;

        @Transactional
        @Idempotent
        public Receipt pay(@IdempotencyKey String key, Charge charge) throws Exception {
            return ledger.charge(key, charge, 0);
        }
    }

    @BeforeEach
    void available() {
        database().assumeAvailable();
        current = database();
    }

    void boot(Map<String, String> extra) {
        database().reset();
        Map<String, String> config = new HashMap<>(extra);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, Resources.class, Ledger.class, Annotated.class)
                .addExtension(new TransactionExtension())
                .initialize();
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
    }

    Idempotency idempotency() {
        return container.select(Idempotency.class).get();
    }

    Ledger ledger() {
        return container.select(Ledger.class).get();
    }

    long payments() {
        return database().count("select count(*) from test_payment");
    }

    @ParameterizedTest(name = "claim {0}")
    @EnumSource(value = ClaimMode.class, names = {"ATOMIC", "OPTIMISTIC", "LEASED"})
    void thirtyTwoRacersWithOneKeyRunOnceAndAllGetItsResult(ClaimMode claim) throws Exception {
        boot(Map.of());
        Idempotency waiting = idempotency().with(IdempotencyOptions.builder().claim(claim).onConcurrent(OnConcurrent.WAIT)
                .waitTimeout(Duration.ofSeconds(60)).build());
        Charge charge = new Charge(1250, "EUR");
        List<Object> answers = PoolStarvationContract.race(32, i -> () -> {
            IdempotentResult<Receipt> r = waiting.execute("payments", "race", charge, Receipt.class,
                    () -> ledger().charge("race", charge, 300));
            return (r.replayed() ? "replayed " : "executed ") + r.value().id();
        });
        Set<String> receipts = new HashSet<>();
        int executed = 0;
        for (Object answer : answers) {
            assertThat(answer).as("every caller gets the result").isInstanceOf(String.class);
            String text = (String) answer;
            executed += text.startsWith("executed ") ? 1 : 0;
            receipts.add(text.substring(text.indexOf(' ') + 1));
        }
        assertThat(executed).as("told it executed").isEqualTo(1);
        assertThat(receipts).as("one result for all").hasSize(1);
        assertThat(ledger().executions()).as("one execution").isEqualTo(1);
        assertThat(payments()).isEqualTo(1);
    }

    @Test
    void aRetryGetsTheStoredResultMarkedReplayedAndAnotherRequestWithTheKeyIsRefused() throws Exception {
        boot(Map.of());
        Charge charge = new Charge(700, "EUR");
        IdempotentResult<Receipt> first = idempotency().execute("payments", "k-1", charge, Receipt.class,
                () -> ledger().charge("k-1", charge, 0));
        IdempotentResult<Receipt> retry = idempotency().execute("payments", "k-1", new Charge(700, "EUR"), Receipt.class,
                () -> ledger().charge("k-1", charge, 0));
        assertThat(first.replayed()).isFalse();
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.value()).isEqualTo(first.value());
        // When the first call's outcome was stored, by the store's clock (the database's, where it has one).
        assertThat(Duration.between(first.firstExecutedAt(), retry.firstExecutedAt()).abs()).isLessThan(Duration.ofSeconds(5));
        assertThat(IdempotentResult.ofLastCall()).hasValueSatisfying(r -> assertThat(r.replayed()).isTrue());
        assertThatThrownBy(() -> idempotency().call("payments", "k-1", new Charge(900, "EUR"), Receipt.class,
                () -> ledger().charge("k-1", charge, 0))).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(ledger().executions()).isEqualTo(1);

        // From another thread (an executor's), inside a caller's transaction: the same key, the same answer.
        java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            IdempotentResult<Receipt> elsewhere = executor.submit(() -> {
                jakarta.transaction.TransactionManager tm = container.select(jakarta.transaction.TransactionManager.class).get();
                tm.begin();
                try {
                    return idempotency().execute("payments", "k-1", charge, Receipt.class, () -> ledger().charge("k-1", charge, 0));
                } finally {
                    tm.commit();
                }
            }).get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(elsewhere.replayed()).isTrue();
            assertThat(elsewhere.value()).isEqualTo(first.value());
        } finally {
            executor.shutdownNow();
        }

        // The cache flushed: the store answers, and the work does not run again.
        container.select(IdempotencyRuntime.class).get().recordCache().clear();
        assertThat(idempotency().execute("payments", "k-1", charge, Receipt.class, () -> ledger().charge("k-1", charge, 0)).replayed())
                .as("replayed from the store").isTrue();
        assertThat(ledger().executions()).isEqualTo(1);
        assertThat(payments()).isEqualTo(1);
    }

    /**
     * An operator imports an export of the keys' own answers while their retries come in (no cache: each asks the
     * store): every retry is replayed, none told "in progress" (an import that locked every row it read, to write nothing
     * over an answer as new as its own, held those retries off until it committed), and none runs the work again.
     */
    @Test
    void retriesDuringAnImportOfTheirOwnAnswersAreReplayed() throws Exception {
        boot(Map.of("idempotency.cache.mode", "none"));
        Charge charge = new Charge(100, "EUR");
        int keys = 300;
        for (int i = 0; i < keys; i++) {
            String key = "i-" + i;
            idempotency().call("payments", key, charge, Receipt.class, () -> ledger().charge(key, charge, 0));
        }
        dev.idempotency.IdempotencyManager manager = container.select(dev.idempotency.IdempotencyManager.class).get();
        java.nio.file.Path file = java.nio.file.Files.createTempFile("import-while-retried", ".jsonl");
        java.util.concurrent.ExecutorService importer = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            assertThat(manager.export(file)).isEqualTo(keys);
            java.util.concurrent.atomic.AtomicBoolean importing = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.Future<Integer> imported = importer.submit(() -> {
                try {
                    int n = 0;
                    for (int round = 0; round < 5; round++) {
                        n += manager.importFrom(file);
                    }
                    return n;
                } finally {
                    importing.set(false);
                }
            });
            int retries = 0;
            int inProgress = 0;
            while (importing.get() || retries < keys) {
                String key = "i-" + (retries++ % keys);
                try {
                    assertThat(idempotency().execute("payments", key, charge, Receipt.class, () -> ledger().charge(key, charge, 0))
                            .replayed()).as(key).isTrue();
                } catch (dev.idempotency.IdempotencyInProgressException e) {
                    inProgress++;
                }
            }
            assertThat(imported.get(120, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(5 * keys);
            assertThat(inProgress).as("retries told in progress, of %d", retries).isZero();
            assertThat(ledger().executions()).as("no retry ran the work").isEqualTo(keys);
        } finally {
            importer.shutdownNow();
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void anAnnotatedMethodsCallerCanAskWhetherItsCallWasReplayed() throws Exception {
        boot(Map.of());
        Annotated annotated = container.select(Annotated.class).get();
        annotated.pay("a-1", new Charge(300, "EUR"));
        assertThat(IdempotentResult.ofLastCall()).hasValueSatisfying(r -> {
            assertThat(r.replayed()).as("a fresh call: executed").isFalse();
            assertThat(r.value()).isEqualTo(new Receipt("a-1#1", 300));
        });
        annotated.pay("a-1", new Charge(300, "EUR"));
        assertThat(IdempotentResult.ofLastCall()).hasValueSatisfying(r -> assertThat(r.replayed()).as("the retry: replayed").isTrue());
        assertThatThrownBy(() -> annotated.pay("a-1", new Charge(999, "EUR"))).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(IdempotentResult.ofLastCall()).as("a refused call has no outcome to tell").isEmpty();
    }

    @Test
    void misuseIsRefusedBeforeAnythingRuns() throws Exception {
        boot(Map.of());
        Charge charge = new Charge(100, "EUR");
        assertThatThrownBy(() -> idempotency().call("payments", " ", charge, Receipt.class, () -> ledger().charge("x", charge, 0)))
                .isInstanceOf(IdempotencyKeyMissingException.class);
        assertThatThrownBy(() -> idempotency().call("payments", "k-2", charge, Runnable.class, () -> () -> { }))
                .isInstanceOf(IdempotencyConfigurationException.class)
                .hasMessageContaining("The result type java.lang.Runnable of the idempotent call in namespace 'payments' cannot be stored");
        assertThatThrownBy(() -> IdempotencyOptions.builder().ttl(Duration.ofSeconds(1)).lease(Duration.ofMinutes(2)).build())
                .isInstanceOf(IdempotencyConfigurationException.class)
                .hasMessageContaining("less than their lease of PT2M");
        assertThat(ledger().executions()).as("nothing ran").isEqualTo(0);
        assertThat(idempotency().with(IdempotencyOptions.builder().required(false).build())
                .call("payments", null, charge, Receipt.class, () -> ledger().charge("free", charge, 0)))
                .as("not required: runs unprotected").isEqualTo(new Receipt("free#1", 100));
    }
}
