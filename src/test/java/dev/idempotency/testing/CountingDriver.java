package dev.idempotency.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * A JDBC driver in front of the real one ({@code jdbc:counting:<real url>}) that records, per process, every
 * statement executed and every commit and rollback, as the database receives them from a pool: the test's
 * way of counting a first request's round trips "through the data source".
 */
public final class CountingDriver implements Driver {

    public static final String PREFIX = "jdbc:counting:";

    private static final List<String> STATEMENTS = new ArrayList<>();
    private static int commits;
    private static int rollbacks;

    public static synchronized void reset() {
        STATEMENTS.clear();
        commits = 0;
        rollbacks = 0;
    }

    public static synchronized List<String> statements() {
        return List.copyOf(STATEMENTS);
    }

    public static synchronized int commits() {
        return commits;
    }

    public static synchronized int rollbacks() {
        return rollbacks;
    }

    private static synchronized void executed(String sql) {
        STATEMENTS.add(sql.strip().replaceAll("\\s+", " "));
    }

    private static synchronized void ended(boolean commit) {
        if (commit) {
            commits++;
        } else {
            rollbacks++;
        }
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null;
        }
        Connection real = DriverManager.getConnection(url.substring(PREFIX.length()), info);
        return proxy(Connection.class, real, (target, method, args) -> {
            String name = method.getName();
            if (name.equals("commit")) {
                ended(true);
            } else if (name.equals("rollback") && (args == null || args.length == 0)) {
                ended(false);
            }
            Object result = invoke(target, method, args);
            if (result instanceof PreparedStatement ps && args != null && args.length > 0 && args[0] instanceof String sql) {
                Class<? extends PreparedStatement> type = ps instanceof CallableStatement ? CallableStatement.class : PreparedStatement.class;
                return proxy(type, ps, (t, m, a) -> {
                    if (m.getName().startsWith("execute")) {
                        executed(sql);
                    }
                    return invoke(t, m, a);
                });
            }
            if (result instanceof Statement s && name.equals("createStatement")) {
                return proxy(Statement.class, s, (t, m, a) -> {
                    if (m.getName().startsWith("execute") && a != null && a.length > 0 && a[0] instanceof String sql) {
                        executed(sql);
                    }
                    return invoke(t, m, a);
                });
            }
            return result;
        });
    }

    private interface Handler {
        Object handle(Object target, Method method, Object[] args) throws Throwable;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, Object target, Handler handler) {
        InvocationHandler h = (p, m, a) -> handler.handle(target, m, a);
        return (T) Proxy.newProxyInstance(CountingDriver.class.getClassLoader(), new Class<?>[] {type}, h);
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Override
    public boolean acceptsURL(String url) {
        return url != null && url.startsWith(PREFIX);
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
        return new DriverPropertyInfo[0];
    }

    @Override
    public int getMajorVersion() {
        return 1;
    }

    @Override
    public int getMinorVersion() {
        return 0;
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }
}
