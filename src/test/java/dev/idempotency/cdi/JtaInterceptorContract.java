package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.ForIdempotency;
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

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The whole CDI path with a real transaction manager: Weld SE, Narayana's {@code @Transactional}
 * interceptors, an Agroal pool enlisting in JTA, and the library's JPA store on Hibernate, created by the
 * library from the application's {@code @ForIdempotency DataSource}. The {@code @Idempotent} interceptor
 * runs inside {@code @Transactional}, so the completion joins the business transaction.
 */
abstract class JtaInterceptorContract {

    static TestDatabase current;

    abstract TestDatabase database();

    WeldContainer container;
    Payments payments;
    Checkout checkout;
    Plain plain;

    @ApplicationScoped
    public static class Resources {
        @Produces
        @ForIdempotency
        @ApplicationScoped
        DataSource dataSource(TransactionManager tm, TransactionSynchronizationRegistry tsr) {
            return JtaEnvironment.dataSource(current, tm, tsr);
        }

        void close(@Disposes @ForIdempotency DataSource ds) throws SQLException {
            ds.unwrap(AgroalDataSource.class).close();
        }
    }

    @ApplicationScoped
    public static class Payments {
        final AtomicInteger executions = new AtomicInteger();

        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Transactional
        @Idempotent
        public String pay(@IdempotencyKey String key, String paymentId, long amount) throws SQLException {
            executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
                ps.setString(1, paymentId);
                ps.setLong(2, amount);
                ps.executeUpdate();
            }
            if (amount <= 0) {
                throw new IllegalArgumentException("amount must be positive");
            }
            return paymentId;
        }

        /** Writes, then its own transaction is marked for rollback: the write must not be remembered as done. */
        @Transactional
        @Idempotent
        public String payButRollBack(@IdempotencyKey String key, String paymentId) throws SQLException {
            String id = pay("inner-" + key, paymentId, 100);
            tsr.setRollbackOnly();
            return id;
        }

        @Inject
        TransactionSynchronizationRegistry tsr;

        public int executions() {
            return executions.get();
        }
    }

    /** No {@code @Transactional}: an atomic claim begins the transaction, and the business write joins it. */
    @ApplicationScoped
    public static class Plain {
        final AtomicInteger executions = new AtomicInteger();

        @Inject
        @ForIdempotency
        DataSource dataSource;

        @Idempotent
        public String pay(@IdempotencyKey String key, String paymentId) throws SQLException {
            executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
                ps.setString(1, paymentId);
                ps.setLong(2, 100);
                ps.executeUpdate();
            }
            if (paymentId.equals("fail")) {
                throw new IllegalStateException("the gateway failed after the write");
            }
            return paymentId;
        }

        public int executions() {
            return executions.get();
        }

        /** Writes, then returns a value that JSON-B cannot write when {@code broken} (its getter throws). */
        @Idempotent
        public UnstorableResultTest.Quote quote(@IdempotencyKey String key, boolean broken) throws SQLException {
            executions.incrementAndGet();
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 1)")) {
                ps.setString(1, key + (broken ? "-broken" : ""));
                ps.executeUpdate();
            }
            return new UnstorableResultTest.Quote("1.00", broken);
        }

        /** Writes, then throws a checked exception (which does not roll back a @Transactional caller). */
        @Idempotent
        public String declined(@IdempotencyKey String key) throws Exception {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values ('declined', 1)")) {
                ps.executeUpdate();
            }
            throw new Exception("declined");
        }
    }

    @ApplicationScoped
    public static class Checkout {
        @Inject
        Plain plain;

        /** Catches a checked exception of an idempotent call; its own transaction then commits. */
        @Transactional
        public String payCatchingDeclined(String key) {
            try {
                plain.declined(key);
                return "not thrown";
            } catch (Exception e) {
                return e.getMessage();
            }
        }

        @Inject
        Payments payments;
        @Inject
        TransactionSynchronizationRegistry tsr;

        /** Pays, then the business transaction fails after the idempotent call returned. */
        @Transactional
        public String payThenRollBack(String key, String paymentId) throws SQLException {
            String id = payments.pay(key, paymentId, 100);
            tsr.setRollbackOnly();
            return id;
        }

        /** Pays twice with one key inside one transaction (a loop, or a retry inside the transaction). */
        @Transactional
        public String payTwiceInOneTransaction(String key) throws SQLException {
            payments.pay(key, "twice-1", 100);
            return payments.pay(key, "twice-1", 100);
        }

        /** Pays, and reports what another connection sees before the business transaction commits. */
        @Transactional
        public long payAndCountCompletedFromOutside(String key, String paymentId) throws SQLException {
            payments.pay(key, paymentId, 100);
            return current.count("select count(*) from idempotency_record where status = 'COMPLETED'");
        }
    }

    @BeforeEach
    void start() {
        database().assumeAvailable();
        current = database();
        boot(Map.of());
    }

    /** The claim this run of the contract uses by default: atomic (the default with JTA), or leased in the Leased subclasses. */
    Map<String, String> claimConfig() {
        return Map.of();
    }

    /** Restarts the container with atomic claims, for the tests of what only they do. */
    void bootAtomic() {
        if (!claimConfig().isEmpty()) {
            container.close();
            boot(Map.of("idempotency.claim", "atomic"));
        }
    }

    /** Resets the database and starts the container with this configuration on top of the test's own. */
    void boot(Map<String, String> extra) {
        database().reset();
        Map<String, String> config = new HashMap<>(claimConfig());
        config.putAll(extra);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = weld(config, Resources.class, Payments.class, Checkout.class, Plain.class)
                .addExtension(new TransactionExtension())
                .initialize();
        payments = container.select(Payments.class).get();
        checkout = container.select(Checkout.class).get();
        plain = container.select(Plain.class).get();
    }

    /** A Weld with the library's portable extension, this configuration and these beans. */
    org.jboss.weld.environment.se.Weld weld(Map<String, String> config, Class<?>... beans) {
        return IdempotencyWeld.weld(config, beans);
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
    }

    long payments() {
        return database().count("select count(*) from test_payment");
    }

    @Test
    void theCompletionCommitsWithTheBusinessWriteAndIsReplayed() throws Exception {
        assertThat(payments.pay("k-1", "pay-1", 100)).isEqualTo("pay-1");
        assertThat(payments.pay("k-1", "pay-1", 100)).isEqualTo("pay-1");
        assertThat(payments.executions()).isEqualTo(1);
        assertThat(payments()).isEqualTo(1);
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);
    }

    @Test
    void theCompletionIsPartOfTheBusinessTransaction() throws Exception {
        assertThat(checkout.payAndCountCompletedFromOutside("k-2", "pay-2")).isZero();
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);
    }

    @Test
    void theInterceptorRunsInsideTransactionalSoARolledBackCallIsNotRemembered() throws Exception {
        payments.payButRollBack("k-5", "pay-5");
        payments.payButRollBack("k-5", "pay-5");
        assertThat(payments()).isZero();
        assertThat(payments.executions()).as("each call ran, because each rolled back").isEqualTo(2);
    }

    @Test
    void thePriorityIsConfigurableAndBelowTransactionalALeasedCompletionNoLongerJoins() throws Exception {
        container.close();
        boot(Map.of("idempotency.interceptor.priority", "100", "idempotency.claim", "leased"));
        payments.payButRollBack("k-6", "pay-6");
        payments.payButRollBack("k-6", "pay-6");
        assertThat(payments()).isZero();
        assertThat(payments.executions()).as("outside the transaction, the rolled back call was remembered").isEqualTo(1);
    }

    @Test
    void belowTransactionalAnAtomicClaimBeginsTheTransactionThatTheBusinessWorkJoins() throws Exception {
        container.close();
        boot(Map.of("idempotency.interceptor.priority", "100", "idempotency.claim", "atomic"));
        payments.payButRollBack("k-7", "pay-7");
        payments.payButRollBack("k-7", "pay-7");
        assertThat(payments()).isZero();
        assertThat(payments.executions()).as("each call ran in the library's transaction, which rolled back").isEqualTo(2);
        assertThat(database().count("select count(*) from idempotency_record")).isZero();
    }

    @Test
    void aMethodWithoutTransactionalGetsTheLibrarysTransactionForItsClaimWorkAndResult() throws Exception {
        bootAtomic();
        assertThat(plain.pay("k-8", "pay-8")).isEqualTo("pay-8");
        assertThat(plain.pay("k-8", "pay-8")).isEqualTo("pay-8");
        assertThatThrownBy(() -> plain.pay("k-9", "fail")).isInstanceOf(IllegalStateException.class);
        assertThat(database().count("select count(*) from test_payment where id = 'fail'")).as("rolled back with the claim").isZero();
        assertThat(plain.pay("k-9", "pay-9")).isEqualTo("pay-9"); // the key is free at once
        assertThat(plain.executions()).isEqualTo(3);
        assertThat(payments()).isEqualTo(2);
    }

    @Test
    void aResultThatCannotBeStoredKeepsNothingAndTheRetryRunsAtOnce() throws Exception {
        assertThatThrownBy(() -> plain.quote("k-q", true)).isInstanceOf(dev.idempotency.IdempotencyResultNotStorableException.class);
        boolean atomic = claimConfig().isEmpty();
        assertThat(database().count("select count(*) from test_payment where id = 'k-q-broken'"))
                .as(atomic ? "rolled back with the claim" : "leased, no transaction: the write stands").isEqualTo(atomic ? 0 : 1);
        assertThat(plain.quote("k-q", false).getPrice()).as("the key is free at once").isEqualTo("1.00");
        assertThat(plain.quote("k-q", false).getPrice()).as("replayed").isEqualTo("1.00");
        assertThat(plain.executions()).isEqualTo(2);
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);
    }

    @Test
    void aCheckedExceptionCaughtByTheCallerStillFreesTheKey() throws Exception {
        bootAtomic();
        assertThat(checkout.payCatchingDeclined("k-10")).isEqualTo("declined");
        assertThat(database().count("select count(*) from idempotency_record")).as("the claim row was removed in the transaction").isZero();
        assertThat(database().count("select count(*) from test_payment where id = 'declined'")).as("the caller's transaction committed").isEqualTo(1);
    }

    /**
     * One key twice inside one transaction: the second call fails at once, naming the cause, instead of waiting on
     * the transaction's own row lock (atomic: the claim row; leased: the completion written into it) until a lock
     * timeout. The method does not run a second time; the runtime exception rolls the transaction back (as
     * {@code @Transactional} does with any), and the key is free for the retry.
     */
    @Test
    void theSameKeyTwiceInOneTransactionFailsAtOnce() throws Exception {
        assertThatThrownBy(() -> checkout.payTwiceInOneTransaction("k-11"))
                .isInstanceOf(dev.idempotency.IdempotencyKeyClaimedInTransactionException.class)
                .hasMessageContaining("already claimed in this transaction");
        assertThat(payments.executions()).as("the second call did not run").isEqualTo(1);
        assertThat(payments()).as("the transaction rolled back with the exception").isZero();
        assertThat(payments.pay("k-11", "twice-1", 100)).as("the key is free").isEqualTo("twice-1");
        assertThat(payments.pay("k-11", "twice-1", 100)).as("replayed").isEqualTo("twice-1");
        assertThat(payments.executions()).isEqualTo(2);
        assertThat(payments()).isEqualTo(1);
    }

    @Test
    void anExceptionRollsBackAndReleasesTheKey() throws Exception {
        assertThatThrownBy(() -> payments.pay("k-3", "pay-3", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(payments()).isZero();
        assertThat(payments.pay("k-3", "pay-3", 0 + 100)).isNotNull(); // another fingerprint: a released key is free
        assertThat(payments.executions()).isEqualTo(2);
        assertThat(payments()).isEqualTo(1);
    }

    @Test
    void aBusinessRollbackAfterTheCallReleasesTheKeyAndTheRetryRunsOnce() throws Exception {
        checkout.payThenRollBack("k-4", "pay-4"); // @Transactional rolls a rollback-only transaction back quietly
        assertThat(payments()).isZero();
        assertThat(database().count("select count(*) from idempotency_record where status = 'COMPLETED'")).isZero();
        assertThat(payments.pay("k-4", "pay-4", 100)).isEqualTo("pay-4");
        assertThat(payments.pay("k-4", "pay-4", 100)).isEqualTo("pay-4");
        assertThat(payments.executions()).isEqualTo(2);
        assertThat(payments()).isEqualTo(1);
    }
}
