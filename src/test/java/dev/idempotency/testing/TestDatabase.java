package dev.idempotency.testing;

import org.junit.jupiter.api.Assumptions;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * The databases the store tests run on. PostgreSQL and MariaDB are the local servers, found through
 * environment variables with the local defaults:
 *
 * <pre>
 * IDEMPOTENCY_TEST_POSTGRES_URL   jdbc:postgresql://127.0.0.1:5432/test   (user IDEMPOTENCY_TEST_POSTGRES_USER=postgres,
 *                                                                          password IDEMPOTENCY_TEST_POSTGRES_PASSWORD=)
 * IDEMPOTENCY_TEST_MARIADB_URL    jdbc:mariadb://127.0.0.1:3306/test?sslMode=disable   (user ..._MARIADB_USER=root,
 *                                                                          password ..._MARIADB_PASSWORD=)
 * </pre>
 *
 * When one cannot be reached its tests are skipped with the reason printed, unless the environment variable
 * {@code IDEMPOTENCY_TEST_REQUIRE_DATABASES=true} (as {@code .ci/run} sets it) or the system property
 * {@code idempotency.test.require-databases=true} is set: then they fail.
 */
public enum TestDatabase {
    H2("jdbc:h2:mem:idempotency;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", ""),
    POSTGRES(env("POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test"), env("POSTGRES_USER", "postgres"),
            env("POSTGRES_PASSWORD", "")),
    MARIADB(env("MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test?sslMode=disable"), env("MARIADB_USER", "root"),
            env("MARIADB_PASSWORD", ""));

    public final String url;
    public final String user;
    public final String password;

    TestDatabase(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    private static String env(String name, String defaultValue) {
        String v = System.getenv("IDEMPOTENCY_TEST_" + name);
        return v == null || v.isBlank() ? defaultValue : v;
    }

    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, password);
    }

    /** Skips (or, when databases are required, fails) the calling test when this database cannot be reached. */
    public void assumeAvailable() {
        try (Connection c = connect()) {
            c.isValid(5);
        } catch (SQLException e) {
            String reason = name().toLowerCase(Locale.ROOT) + " at " + url + " is not reachable (" + e.getMessage()
                    + "); start it or point IDEMPOTENCY_TEST_" + name() + "_URL at one";
            if (Boolean.getBoolean("idempotency.test.require-databases")
                    || "true".equalsIgnoreCase(System.getenv("IDEMPOTENCY_TEST_REQUIRE_DATABASES"))) {
                throw new AssertionError("Required database missing: " + reason, e);
            }
            System.out.println("SKIPPED: " + reason);
            Assumptions.abort(reason);
        }
    }

    /** Drops the library's tables and the tests' business table. */
    public void reset() {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS idempotency_schema_version");
            s.execute("DROP TABLE IF EXISTS test_payment");
            s.execute("CREATE TABLE test_payment (id VARCHAR(100) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL)");
        } catch (SQLException e) {
            throw new AssertionError("Could not reset " + this, e);
        }
    }

    /** How many sessions are waiting for a lock right now. */
    public long sessionsWaitingForALock() {
        return count(switch (this) {
            case H2 -> "select count(*) from information_schema.sessions where blocker_id is not null";
            case POSTGRES -> "select count(*) from pg_stat_activity where wait_event_type = 'Lock'";
            // A statement blocked on a row lock shows as a running locking read or update.
            case MARIADB -> "select count(*) from information_schema.processlist where command = 'Query'"
                    + " and id <> connection_id() and (info like '%for update%' or info like 'update %' or info like 'delete %')";
        });
    }

    /** Waits (bounded) until at least {@code n} sessions wait for a lock. */
    public void awaitSessionsWaitingForALock(long n) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (sessionsWaitingForALock() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(n + " sessions never waited for the lock on " + this);
            }
            Thread.onSpinWait();
        }
    }

    public long count(String sql) {
        try (Connection c = connect(); Statement s = c.createStatement(); var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new AssertionError(sql, e);
        }
    }
}
