package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.ForIdempotency;
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
 * runs inside {@code @Transactional} (SPEC I7), so the completion joins the business transaction (rule 2).
 */
abstract class JtaInterceptorContract {

    static TestDatabase current;

    abstract TestDatabase database();

    WeldContainer container;
    Payments payments;
    Checkout checkout;

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

    @ApplicationScoped
    public static class Checkout {
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

    /** Resets the database and starts the container with this configuration on top of the test's own. */
    void boot(Map<String, String> extra) {
        database().reset();
        Map<String, String> config = new HashMap<>(extra);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, Resources.class, Payments.class, Checkout.class)
                .addExtension(new TransactionExtension())
                .initialize();
        payments = container.select(Payments.class).get();
        checkout = container.select(Checkout.class).get();
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
    void thePriorityIsConfigurableAndBelowTransactionalTheCompletionNoLongerJoins() throws Exception {
        container.close();
        boot(Map.of("idempotency.interceptor.priority", "100"));
        payments.payButRollBack("k-6", "pay-6");
        payments.payButRollBack("k-6", "pay-6");
        assertThat(payments()).isZero();
        assertThat(payments.executions()).as("outside the transaction, the rolled back call was remembered").isEqualTo(1);
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
