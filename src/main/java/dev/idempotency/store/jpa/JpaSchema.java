package dev.idempotency.store.jpa;

import dev.idempotency.IdempotencyStoreException;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The shipped schema and its versions, for the library's own persistence unit: the whole DDL
 * ({@code META-INF/idempotency/ddl/<database>.sql}) and one migration script per version
 * ({@code META-INF/idempotency/migration/<database>/V<n>__<what>.sql}, laid out for Flyway or Liquibase, and not
 * under Flyway's default {@code db/migration}, so that an application's Flyway never picks them up unasked).
 * Version 1 is release 0.1's table, which names no version; version 2 adds {@value #VERSION_TABLE}; version 3 drops the
 * unique constraint on (namespace, principal, idem_key), which the primary key (their SHA-256) already implies.
 */
public final class JpaSchema {

    public static final String TABLE = "idempotency_record";
    /** The table that names the schema's version (none in version 1, release 0.1). */
    public static final String VERSION_TABLE = "idempotency_schema_version";
    /** The shipped migrations, one per schema version, in order; Flyway's naming. */
    static final List<String> MIGRATIONS = List.of("V1__idempotency_record.sql", "V2__idempotency_schema_version.sql",
            "V3__drop_scope_constraint.sql");
    /** The schema version this library creates. */
    public static final int VERSION = MIGRATIONS.size();
    /**
     * The oldest schema version this library runs on as it is: version 2's table differs from version 3's only by a unique
     * constraint the primary key implies, so {@code validate} deploys on it, with a warning naming the script.
     */
    public static final int OLDEST_USABLE = 2;

    private static final Logger LOG = Logger.getLogger(JpaSchema.class.getName());

    private JpaSchema() {
    }

    /** The DDL resource for a database product name (as JDBC reports it): the whole schema at {@link #VERSION}. */
    public static String ddlResource(String databaseProductName) {
        return "META-INF/idempotency/ddl/" + databaseName(databaseProductName) + ".sql";
    }

    /** The name of a database's scripts ({@code h2}, {@code postgresql}, {@code mariadb}, {@code derby}). */
    public static String databaseName(String databaseProductName) {
        String p = databaseProductName.toLowerCase(Locale.ROOT);
        String file;
        if (p.contains("h2")) {
            file = "h2";
        } else if (p.contains("postgres")) {
            file = "postgresql";
        } else if (p.contains("mariadb") || p.contains("mysql")) {
            file = "mariadb";
        } else if (p.contains("derby")) {
            file = "derby";
        } else {
            throw new IdempotencyStoreException("No DDL ships for " + databaseProductName
                    + "; create the table " + TABLE + " from one of META-INF/idempotency/ddl/*.sql and set idempotency.schema=none");
        }
        return file;
    }

    /** The statements of a DDL resource. */
    public static List<String> statements(String resource) {
        try (InputStream in = JpaSchema.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IdempotencyStoreException("Missing " + resource);
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return Arrays.stream(text.replaceAll("(?m)^--.*$", "").split(";"))
                    .map(String::strip)
                    .filter(s -> !s.isEmpty())
                    .toList();
        } catch (IOException e) {
            throw new IdempotencyStoreException("Could not read " + resource, e);
        }
    }

    /** How the store's claim inserts on this data source's database (one connection, asked once). */
    public static JpaIdempotencyStore.InsertIfAbsent insertIfAbsent(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            return insertIfAbsent(c.getMetaData().getDatabaseProductName());
        } catch (SQLException e) {
            throw new IdempotencyStoreException("Could not read the database's name: " + e.getMessage(), e);
        }
    }

    /** How the store's claim inserts on a database with this product name (as JDBC reports it). */
    public static JpaIdempotencyStore.InsertIfAbsent insertIfAbsent(String databaseProductName) {
        String p = databaseProductName.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return JpaIdempotencyStore.InsertIfAbsent.POSTGRESQL;
        }
        if (p.contains("mariadb")) {
            return JpaIdempotencyStore.InsertIfAbsent.MARIADB;
        }
        if (p.equals("h2")) {
            return JpaIdempotencyStore.InsertIfAbsent.H2;
        }
        if (p.contains("derby")) {
            return JpaIdempotencyStore.InsertIfAbsent.DERBY;
        }
        return JpaIdempotencyStore.InsertIfAbsent.PORTABLE;
    }

    /** Creates the table from the shipped DDL unless it exists (and migrates an older one). Returns whether it created it. */
    public static boolean createIfMissing(DataSource dataSource) {
        return prepare(dataSource, "create") == Prepared.CREATED;
    }

    /** What {@link #prepare} found or did. */
    public enum Prepared {
        /** The table was missing and is created at {@link #VERSION}. */
        CREATED,
        /** The table was at an older version and is migrated to {@link #VERSION}. */
        MIGRATED,
        /**
         * The table is at {@link #VERSION}, or a newer one, or ({@code validate}) an older one from
         * {@link #OLDEST_USABLE} on: used as it is, with a warning.
         */
        CURRENT
    }

    /**
     * Brings the schema to {@link #VERSION} or checks that it is there ({@code idempotency.schema}): {@code create}
     * creates a missing table and migrates an older one with the shipped scripts it lacks, in order; {@code validate}
     * changes nothing and fails on a missing or older table, naming the scripts to run.
     *
     * @throws IdempotencyStoreException the schema is missing or older ({@code validate}), or a script failed
     */
    public static Prepared prepare(DataSource dataSource, String mode) {
        try (Connection c = dataSource.getConnection()) {
            String database = c.getMetaData().getDatabaseProductName();
            int found = version(c);
            if (found > VERSION) {
                LOG.log(Level.WARNING, "The table {0} is at schema version {1}, newer than this library''s {2}; going on "
                        + "(a newer version''s schema stays readable by the one before it)", new Object[] {TABLE, found, VERSION});
                return Prepared.CURRENT;
            }
            if (found == VERSION) {
                return Prepared.CURRENT;
            }
            String db = databaseName(database);
            if (!mode.equals("create") && found >= OLDEST_USABLE) {
                LOG.log(Level.WARNING, "The table {0} is at schema version {1}; this version of idempotency-jakarta creates "
                        + "version {2} and runs on {1} as it is (idempotency.schema={3}). The migration script shipped in the "
                        + "jar drops a unique constraint the primary key already implies, which every first request''s insert "
                        + "pays for: {4}", new Object[] {TABLE, found, VERSION, mode, migrationScripts(db, found + 1)});
                return Prepared.CURRENT;
            }
            if (!mode.equals("create")) {
                throw new IdempotencyStoreException(found == 0
                        ? "The table " + TABLE + " does not exist (idempotency.schema=" + mode + "). Create it with "
                                + migrationScripts(db, 1) + " (or all at once: META-INF/idempotency/ddl/" + db
                                + ".sql), or set idempotency.schema=create"
                        : "The table " + TABLE + " is at schema version " + found + (found == 1 ? " (release 0.1)" : "")
                                + "; this version of idempotency-jakarta needs version " + VERSION + " (idempotency.schema=" + mode
                                + "). Run the migration script shipped in the jar: " + migrationScripts(db, found + 1)
                                + ", or set idempotency.schema=create to let the library run it");
            }
            if (found == 0 && exists(c.getMetaData(), VERSION_TABLE) && !exists(c.getMetaData(), TABLE)) {
                // A version table whose record table was dropped: it describes nothing. (Looked at in this order: a
                // node creating the schema right now made the record table before the version table.)
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE " + VERSION_TABLE);
                }
            }
            for (int v = found + 1; v <= VERSION; v++) {
                migrate(c, db, v);
            }
            LOG.log(Level.INFO, found == 0 ? "Created the table {0} (schema version {2})"
                    : "Migrated the table {0} from schema version {1} to {2}", new Object[] {TABLE, found, VERSION});
            return found == 0 ? Prepared.CREATED : Prepared.MIGRATED;
        } catch (SQLException e) {
            throw new IdempotencyStoreException("Could not prepare the table " + TABLE + ": " + e.getMessage(), e);
        }
    }

    /**
     * The schema's version on this connection's database: 0 without the record table, 1 with it and no version table
     * (release 0.1), else the highest version recorded.
     */
    public static int version(Connection c) throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        if (!exists(meta, TABLE)) {
            return 0;
        }
        if (!exists(meta, VERSION_TABLE)) {
            return 1;
        }
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT MAX(version) FROM " + VERSION_TABLE)) {
            int v = rs.next() ? rs.getInt(1) : 0;
            return Math.max(v, 1);
        }
    }

    /** The shipped script of schema version {@code v} for a database ({@code h2}, {@code postgresql}, ...). */
    public static String migrationResource(String db, int v) {
        return "META-INF/idempotency/migration/" + db + "/" + MIGRATIONS.get(v - 1);
    }

    /** The scripts from version {@code from} to {@link #VERSION}, for a message. */
    private static String migrationScripts(String db, int from) {
        List<String> scripts = new java.util.ArrayList<>();
        for (int v = from; v <= VERSION; v++) {
            scripts.add(migrationResource(db, v));
        }
        return String.join(", then ", scripts);
    }

    /** Runs one version's script in a transaction; a failure caused by another node migrating at once is waited out. */
    private static void migrate(Connection c, String db, int v) throws SQLException {
        String script = migrationResource(db, v);
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            for (String sql : statements(script)) {
                if (sql.toLowerCase(Locale.ROOT).contains("drop") && sql.toLowerCase(Locale.ROOT).contains("uq_idempotency_scope")) {
                    dropScopeConstraint(c, s, sql);
                } else {
                    s.execute(sql);
                }
            }
            c.commit();
        } catch (SQLException e) {
            c.rollback();
            // Another node may be running the same script: wait (bounded) until it finished. Each look in a
            // transaction of its own: under REPEATABLE READ (MariaDB) one transaction would never see its commit.
            c.setAutoCommit(true);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (version(c) < v) {
                if (System.nanoTime() > deadline) {
                    throw new IdempotencyStoreException("Could not run " + script + " (schema version " + v + "): "
                            + e.getMessage() + ". Run it by hand, then deploy again", e);
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IdempotencyStoreException("Interrupted while waiting for another node's " + script, e);
                }
            }
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /**
     * Version 3's drop of the unique constraint on the key's scope. A table a JPA provider made from the entity
     * (Hibernate's schema generation: drop-and-create, say) never had it: the database's "no such constraint" is then
     * taken as done (under a savepoint, which PostgreSQL needs to go on after a failed statement).
     */
    private static void dropScopeConstraint(Connection c, Statement s, String sql) throws SQLException {
        java.sql.Savepoint before = c.setSavepoint();
        try {
            s.execute(sql);
        } catch (SQLException e) {
            boolean absent = "42704".equals(e.getSQLState()) // PostgreSQL: undefined object
                    || e.getErrorCode() == 90057 // H2: constraint not found
                    || "42X86".equals(e.getSQLState()) // Derby: no such constraint
                    || e.getErrorCode() == 1091; // MariaDB: can't drop, check that it exists
            if (!absent) {
                throw e;
            }
            try {
                c.rollback(before);
            } catch (SQLException gone) {
                // H2 and MariaDB commit around DDL, which ends the savepoint: nothing of this statement to roll back
            }
            LOG.log(Level.INFO, "The table {0} has no constraint uq_idempotency_scope (it was made from the entity, not by the "
                    + "library''s scripts): nothing to drop", TABLE);
        }
    }

    private static boolean exists(DatabaseMetaData meta, String table) throws SQLException {
        return existsAs(meta, table) || existsAs(meta, table.toUpperCase(Locale.ROOT));
    }

    private static boolean existsAs(DatabaseMetaData meta, String table) throws SQLException {
        try (ResultSet rs = meta.getTables(null, null, table, new String[] {"TABLE"})) {
            while (rs.next()) {
                String schema = rs.getString("TABLE_SCHEM");
                String catalog = rs.getString("TABLE_CAT");
                if (isCurrent(meta.getConnection(), schema, catalog)) {
                    return true;
                }
            }
            return false;
        }
    }

    private static boolean isCurrent(Connection c, String schema, String catalog) throws SQLException {
        String currentSchema = c.getSchema();
        String currentCatalog = c.getCatalog();
        boolean schemaOk = schema == null || currentSchema == null || schema.equalsIgnoreCase(currentSchema);
        boolean catalogOk = catalog == null || currentCatalog == null || catalog.equalsIgnoreCase(currentCatalog);
        return schemaOk && catalogOk;
    }
}
