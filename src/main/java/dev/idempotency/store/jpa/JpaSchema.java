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

/**
 * The shipped DDL ({@code META-INF/idempotency/ddl/<database>.sql}) and "create the table when it is
 * missing" for the library's own persistence unit.
 */
public final class JpaSchema {

    public static final String TABLE = "idempotency_record";

    private JpaSchema() {
    }

    /** The DDL resource for a database product name (as JDBC reports it). */
    public static String ddlResource(String databaseProductName) {
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
        return "META-INF/idempotency/ddl/" + file + ".sql";
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
        return JpaIdempotencyStore.InsertIfAbsent.PORTABLE;
    }

    /** Creates the table from the shipped DDL unless it exists. Returns whether it created it. */
    public static boolean createIfMissing(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            DatabaseMetaData meta = c.getMetaData();
            if (exists(meta, TABLE) || exists(meta, TABLE.toUpperCase(Locale.ROOT))) {
                return false;
            }
            boolean autoCommit = c.getAutoCommit();
            try (Statement s = c.createStatement()) {
                for (String sql : statements(ddlResource(meta.getDatabaseProductName()))) {
                    s.execute(sql);
                }
                if (!autoCommit) {
                    c.commit();
                }
            } catch (SQLException e) {
                // Another node may have created it at the same moment.
                if (!autoCommit) {
                    c.rollback();
                }
                if (exists(c.getMetaData(), TABLE) || exists(c.getMetaData(), TABLE.toUpperCase(Locale.ROOT))) {
                    return false;
                }
                throw e;
            }
            return true;
        } catch (SQLException e) {
            throw new IdempotencyStoreException("Could not create the table " + TABLE + ": " + e.getMessage(), e);
        }
    }

    private static boolean exists(DatabaseMetaData meta, String table) throws SQLException {
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
