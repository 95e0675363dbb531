package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;
import dev.idempotency.ClaimMode;
import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Idempotent;
import dev.idempotency.store.jpa.ConnectionSharing;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.transaction.TransactionManager;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * A data source that hands a transaction a second connection while its first is open (on Payara and GlassFish, a pool
 * not of the XA type) is found when the library starts, not in the first burst: methods that ask for atomic or
 * optimistic claims fail the deployment with the fix; the others are served with leased claims, and a WARNING says why.
 * Here a pool without transaction integration stands for such a pool, beside Narayana; the pools that share (Agroal
 * with Narayana's integration, as WildFly's and Liberty's do) are found sharing on each database of the machine.
 */
class ConnectionSharingTest {

    /** Every pool a test made: closed after it (a deployment that fails never disposes of its producer's pool). */
    static final List<AgroalDataSource> POOLS = new CopyOnWriteArrayList<>();

    /** A pool that knows nothing of transactions: every handle taken while another is open is another connection. */
    static AgroalDataSource unshared() throws SQLException {
        AgroalDataSource made = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool
                        .maxSize(8)
                        .acquisitionTimeout(Duration.ofSeconds(10))
                        .connectionFactoryConfiguration(cf -> cf.jdbcUrl(TestDatabase.POSTGRES.url)
                                .principal(new NamePrincipal(TestDatabase.POSTGRES.user))
                                .credential(new SimplePassword(TestDatabase.POSTGRES.password)))));
        POOLS.add(made);
        return made;
    }

    @ApplicationScoped
    public static class Unshared {
        @Produces
        @ForIdempotency
        @ApplicationScoped
        DataSource dataSource() throws SQLException {
            return unshared();
        }

        void close(@Disposes @ForIdempotency DataSource ds) {
            // closed after the test (ConnectionSharingTest#stop), with the pools of deployments that failed
        }
    }

    /** Leaves the claim to its default; reports how many records are committed while it runs. */
    @ApplicationScoped
    public static class ByDefault {
        @Idempotent
        public long pay(@IdempotencyKey String key) {
            return TestDatabase.POSTGRES.count("select count(*) from idempotency_record");
        }
    }

    @ApplicationScoped
    public static class AsksForAtomic {
        @Idempotent(claim = ClaimMode.ATOMIC)
        public String pay(@IdempotencyKey String key) {
            return key;
        }
    }

    @ApplicationScoped
    public static class AsksForOptimistic {
        @Idempotent(claim = ClaimMode.OPTIMISTIC)
        public String pay(@IdempotencyKey String key) {
            return key;
        }
    }

    final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    final Logger runtimeLog = Logger.getLogger(IdempotencyRuntime.class.getName());
    WeldContainer container;

    @AfterEach
    void stop() {
        runtimeLog.removeHandler(capture);
        if (container != null) {
            container.close();
        }
        POOLS.forEach(AgroalDataSource::close);
        POOLS.clear();
    }

    static Map<String, String> config() {
        Map<String, String> config = new HashMap<>();
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        return config;
    }

    @Test
    void aMethodLeavingTheClaimToItsDefaultIsLeasedAndAWarningSaysWhy() {
        TestDatabase.POSTGRES.assumeAvailable();
        TestDatabase.POSTGRES.reset();
        runtimeLog.addHandler(capture);
        container = IdempotencyWeld.weld(config(), Unshared.class, ByDefault.class).addExtension(new TransactionExtension()).initialize();
        ByDefault payments = container.select(ByDefault.class).get();

        // A leased claim commits before the work runs: the work sees its record from another connection (an atomic
        // claim's record would commit with the work, after it).
        assertThat(payments.pay("k1")).as("records committed while the call runs").isEqualTo(1);
        assertThat(payments.pay("k1")).as("the retry replays the first answer").isEqualTo(1);
        assertThat(TestDatabase.POSTGRES.count("select count(*) from idempotency_record")).isEqualTo(1);
        assertThat(warnings).extracting(LogRecord::getMessage).anySatisfy(m -> assertThat(m).startsWith("Claims are leased, not atomic"));
        assertThat(warnings.stream().map(r -> java.text.MessageFormat.format(r.getMessage(), r.getParameters())).toList())
                .anySatisfy(m -> assertThat(m).contains("hands a transaction a second connection while its first is open")
                        .contains("res-type=javax.sql.XADataSource"));
    }

    @ParameterizedTest
    @EnumSource(names = {"ATOMIC", "OPTIMISTIC"})
    void aMethodAskingForAClaimInTheTransactionFailsTheDeploymentWithTheFix(ClaimMode mode) {
        TestDatabase.POSTGRES.assumeAvailable();
        Class<?> bean = mode == ClaimMode.ATOMIC ? AsksForAtomic.class : AsksForOptimistic.class;
        String failure;
        try (WeldContainer ignored = IdempotencyWeld.weld(config(), Unshared.class, bean).addExtension(new TransactionExtension()).initialize()) {
            failure = fail("the deployment should have failed");
        } catch (RuntimeException e) {
            StringWriter text = new StringWriter();
            e.printStackTrace(new PrintWriter(text));
            failure = text.toString();
        }
        assertThat(failure)
                .contains("@Idempotent methods [" + bean.getName() + "#pay] ask for claim ATOMIC or OPTIMISTIC, but the records' data "
                        + "source (the @ForIdempotency DataSource) hands a transaction a second connection while its first is open")
                .contains("asadmin set resources.jdbc-connection-pool.<pool>.res-type=javax.sql.XADataSource")
                .contains("or use claim = ClaimMode.LEASED");
    }

    /** The check in a transaction of Narayana's, as the library runs it in one of the container's. */
    static ConnectionSharing.Finding check(DataSource ds, TransactionManager tm) {
        return ConnectionSharing.check(ds, (Supplier<ConnectionSharing.Finding> work) -> {
            try {
                tm.begin();
                try {
                    return work.get();
                } finally {
                    tm.commit();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @ParameterizedTest
    @EnumSource(value = TestDatabase.class)
    void aPoolThatEnlistsItsConnectionsSharesThemOnEveryDatabase(TestDatabase db) throws Exception {
        db.assumeAvailable();
        try (JtaEnvironment jta = new JtaEnvironment(db)) {
            assertThat(check(jta.dataSource, jta.tm)).isEqualTo(ConnectionSharing.Finding.SHARED);
        }
    }

    @Test
    void aPoolThatDoesNotIsFoundOut() throws Exception {
        TestDatabase.POSTGRES.assumeAvailable();
        try (JtaEnvironment jta = new JtaEnvironment(TestDatabase.POSTGRES); AgroalDataSource plain = unshared()) {
            assertThat(check(plain, jta.tm)).isEqualTo(ConnectionSharing.Finding.NOT_SHARED);
        }
    }
}
