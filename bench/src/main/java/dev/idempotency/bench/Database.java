package dev.idempotency.bench;

import dev.idempotency.store.jpa.JpaSchema;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The three databases of the benchmarks: H2 in memory, and the local PostgreSQL and MariaDB (database
 * {@code test}, trust or empty-password login, as on the project's machines). Each benchmark trial starts from
 * empty tables: {@code idempotency_record} (the library's shipped DDL), {@code bench_floor} (the raw-JDBC floor's
 * table, the same columns that matter) and {@code bench_business} (a business row for the JTA workloads).
 */
public enum Database {
    h2("jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "", "VARBINARY(16777216)"),
    postgresql("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", "BYTEA"),
    mariadb("jdbc:mariadb://127.0.0.1:3306/test?sslMode=disable", "root", "", "MEDIUMBLOB"),
    /** Node 1 of the three-node MariaDB Galera cluster that {@code bench/galera start} runs (its writes certified on all three). */
    galera("jdbc:mariadb://127.0.0.1:3411/test?sslMode=disable&sessionVariables=wsrep_sync_wait=1", "idem", "idem", "MEDIUMBLOB");

    /**
     * Quiet: Hibernate's start-up lines, and the constraint violations that racing inserts (Camel's losers) make
     * it log; kept referenced so that the levels stay set.
     */
    private static final java.util.List<java.util.logging.Logger> QUIET = java.util.List.of(
            quiet("org.hibernate", java.util.logging.Level.WARNING),
            quiet("org.hibernate.engine.jdbc.spi.SqlExceptionHelper", java.util.logging.Level.OFF),
            quiet("org.infinispan", java.util.logging.Level.WARNING),
            quiet("com.arjuna", java.util.logging.Level.WARNING));

    private static java.util.logging.Logger quiet(String name, java.util.logging.Level level) {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
        logger.setLevel(level);
        return logger;
    }

    public final String url;
    public final String user;
    public final String password;
    private final String blob;

    Database(String url, String user, String password, String blob) {
        this.url = url;
        this.user = user;
        this.password = password;
        this.blob = blob;
    }

    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, password);
    }

    /**
     * A pool, as in a server: the store's and Camel's connections come from one like it. Its connections stay
     * out of auto-commit, and Hibernate is told so ({@link #JPA_PROPERTIES}), as the floor's connection does:
     * otherwise every transaction costs MariaDB two more round trips ({@code set autocommit=0}, then
     * {@code =1} when the pool takes the connection back), for the library and Camel alike.
     */
    public AgroalDataSource pool(int size) throws SQLException {
        return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(c -> c.maxSize(size).connectionFactoryConfiguration(f -> f
                        .autoCommit(false)
                        .jdbcUrl(url).principal(new NamePrincipal(user)).credential(new SimplePassword(password)))));
    }

    /** For entity manager factories on {@link #pool(int)}. */
    public static final java.util.Map<String, String> JPA_PROPERTIES =
            java.util.Map.of("hibernate.connection.provider_disables_autocommit", "true");

    /** Drops and creates the benchmark tables; the record table gets {@code records} finished rows first. */
    public void reset(int records) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
            s.execute("DROP TABLE IF EXISTS idempotency_schema_version");
            s.execute("DROP TABLE IF EXISTS bench_floor");
            s.execute("DROP TABLE IF EXISTS bench_business");
            s.execute("DROP TABLE IF EXISTS CAMEL_MESSAGEPROCESSED");
            s.execute("CREATE TABLE bench_floor (id VARCHAR(64) PRIMARY KEY, status VARCHAR(16) NOT NULL, response " + blob + ")");
            s.execute("CREATE TABLE bench_business (id VARCHAR(64) PRIMARY KEY, amount BIGINT NOT NULL)");
        }
        try (Connection c = connect()) {
            for (String sql : JpaSchema.statements(JpaSchema.ddlResource(c.getMetaData().getDatabaseProductName()))) {
                try (Statement s = c.createStatement()) {
                    s.execute(sql);
                }
            }
            prefill(c, records);
        }
    }

    /**
     * Finished records (and as many floor rows), so that the indexes have the depth of a store holding them:
     * inserted in batches of 1,000 in one transaction per 50,000.
     */
    private void prefill(Connection c, int records) throws SQLException {
        if (records <= 0) {
            return;
        }
        c.setAutoCommit(false);
        long now = System.currentTimeMillis();
        try (PreparedStatement r = c.prepareStatement("INSERT INTO idempotency_record (id, namespace, principal, idem_key, status,"
                + " fingerprint, response, attempts, first_seen, last_seen, completed_at, expires_at, version)"
                + " VALUES (?, 'prefill', '', ?, 'COMPLETED', ?, ?, 1, ?, ?, ?, ?, 1)");
             PreparedStatement f = c.prepareStatement("INSERT INTO bench_floor (id, status, response) VALUES (?, 'COMPLETED', ?)")) {
            byte[] response = new byte[64];
            for (int i = 0; i < records; i++) {
                String id = String.format("%064x", i);
                r.setString(1, id);
                r.setString(2, "prefill-" + i);
                r.setString(3, id);
                r.setBytes(4, response);
                r.setLong(5, now);
                r.setLong(6, now);
                r.setLong(7, now);
                r.setLong(8, now + 86_400_000L);
                r.addBatch();
                f.setString(1, id);
                f.setBytes(2, response);
                f.addBatch();
                if ((i + 1) % 1_000 == 0 || i == records - 1) {
                    r.executeBatch();
                    f.executeBatch();
                }
                if ((i + 1) % 50_000 == 0) {
                    c.commit();
                }
            }
        }
        c.commit();
        c.setAutoCommit(true);
        if (this == postgresql) {
            try (Statement s = c.createStatement()) {
                s.execute("ANALYZE idempotency_record");
                s.execute("ANALYZE bench_floor");
            }
        }
    }
}
