package dev.idempotency.store.jpa;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Whether a data source hands a transaction the connection it already has while a handle of it is still open, as the
 * atomic and optimistic claims need: the application's JPA provider keeps its handle from its first write until the
 * commit, and the library's claim statements run in the same transaction in between. A pool that does not (on Payara and
 * GlassFish, a pool whose type is not {@code javax.sql.XADataSource}, the default {@code H2Pool} included) gives the
 * library a second connection for a moment in each call: a burst of more calls than the pool has connections then
 * stalls until the pool's wait gives up, and every call of it is answered {@code 503}.
 *
 * <p>On Payara and GlassFish the pool's type tells (its managed connection factory, read from the data source: the
 * XA one shares). Elsewhere the check takes handles in one new transaction as a call does (the claim's, closed; then the
 * work's, held; then the answer's) and asks the database which session each one is (PostgreSQL's backend pid, MariaDB's
 * and MySQL's connection id, H2's session id, Oracle's SID, SQL Server's SPID): two sessions mean two connections. On
 * another database it cannot tell, and says so.
 */
public final class ConnectionSharing {

    /** What the check found. */
    public enum Finding {
        /** One connection for the transaction: atomic and optimistic claims work. */
        SHARED,
        /** Two connections in one transaction: atomic and optimistic claims would hold two of the pool's each. */
        NOT_SHARED,
        /** The database has no session id the check knows: not checked. */
        UNKNOWN
    }

    private static final Logger LOG = Logger.getLogger(ConnectionSharing.class.getName());

    private ConnectionSharing() {
    }

    /**
     * The check, run by {@code inNewTransaction} (which begins a transaction of its own, commits it and returns what the
     * work returned).
     */
    public static Finding check(DataSource dataSource, java.util.function.Function<Supplier<Finding>, Finding> inNewTransaction) {
        String factory = glassFishFactory(dataSource);
        if (factory != null) {
            LOG.log(Level.FINE, "The pool''s connection factory: {0}", factory);
            return factory.endsWith(".XAManagedConnectionFactory") ? Finding.SHARED : Finding.NOT_SHARED;
        }
        return inNewTransaction.apply(() -> {
            String query;
            String claim;
            // As a call does: the claim's statement (its handle closed), then the application's first write (its JPA
            // provider keeps the handle until the commit), then the answer's statement while that handle is open.
            try (Connection first = dataSource.getConnection()) {
                query = sessionQuery(first.getMetaData().getDatabaseProductName());
                if (query == null) {
                    return Finding.UNKNOWN;
                }
                claim = session(first, query);
            } catch (SQLException e) {
                throw new IllegalStateException("Could not ask the database which session a connection is: " + e.getMessage(), e);
            }
            try (Connection work = dataSource.getConnection()) {
                String held = session(work, query);
                try (Connection answer = dataSource.getConnection()) {
                    String last = session(answer, query);
                    LOG.log(Level.FINE, "Sessions: claim {0}, work {1}, answer {2}", new Object[] {claim, held, last});
                    return claim.equals(held) && held.equals(last) ? Finding.SHARED : Finding.NOT_SHARED;
                }
            } catch (SQLException e) {
                throw new IllegalStateException("Could not ask the database which session a connection is: " + e.getMessage(), e);
            }
        });
    }

    /**
     * On Payara and GlassFish, the class of the pool's managed connection factory (its type: {@code XAManagedConnectionFactory}
     * for an XA pool), else {@code null}.
     */
    static String glassFishFactory(DataSource dataSource) {
        DataSource ds = dataSource;
        while (ds instanceof DelegatingDataSource d) {
            ds = d.pool();
        }
        for (Class<?> c = ds.getClass(); c != null; c = c.getSuperclass()) {
            if (!c.getName().startsWith("com.sun.gjc.spi")) {
                continue;
            }
            try {
                java.lang.reflect.Field mcf = c.getDeclaredField("mcf");
                mcf.setAccessible(true);
                Object factory = mcf.get(ds);
                return factory == null ? null : factory.getClass().getName();
            } catch (NoSuchFieldException e) {
                // a superclass has it
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }

    /** The statement that names the connection's session on this database, or {@code null}. */
    static String sessionQuery(String product) {
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return "select pg_backend_pid()";
        }
        if (p.contains("mariadb") || p.contains("mysql")) {
            return "select connection_id()";
        }
        if (p.equals("h2")) {
            return "select session_id()";
        }
        if (p.contains("oracle")) {
            return "select sys_context('USERENV', 'SID') from dual";
        }
        if (p.contains("sql server")) {
            return "select @@spid";
        }
        return null;
    }

    private static String session(Connection c, String query) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(query)) {
            r.next();
            return r.getString(1);
        }
    }
}
