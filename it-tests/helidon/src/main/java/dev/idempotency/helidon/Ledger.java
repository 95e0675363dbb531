package dev.idempotency.helidon;

import dev.idempotency.ForIdempotency;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The business side: a charge is a row in {@code charge}, written inside the caller's transaction on the records' data
 * source ({@code @ForIdempotency}: on Helidon, the pool's connection enlisted once per transaction, the one the claim
 * is written on), and counted per key. A test can hold a key's run until it lets it go.
 */
@ApplicationScoped
public class Ledger {

    @Inject
    @ForIdempotency
    DataSource dataSource;

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> started = new ConcurrentHashMap<>();

    /** Made at start, as the application's own schema would be. */
    void start(@Observes @Initialized(ApplicationScoped.class) Object started) {
        createTable();
    }

    void createTable() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS charge (id VARCHAR(64) PRIMARY KEY, idem_key VARCHAR(255) NOT NULL, amount BIGINT NOT NULL)");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes the charge's row (in the caller's transaction, if any) and answers its receipt. */
    public Receipt charge(String key, long amount) {
        int run = countRun(key);
        String id = UUID.randomUUID().toString();
        try (Connection c = dataSource.getConnection();
             PreparedStatement insert = c.prepareStatement("INSERT INTO charge (id, idem_key, amount) VALUES (?, ?, ?)")) {
            insert.setString(1, id);
            insert.setString(2, key);
            insert.setLong(3, amount);
            insert.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        pauseIfHeld(key);
        return new Receipt(id, key, amount, run);
    }

    /** Counts a run of the business code for this key; answers which run it is. */
    public int countRun(String key) {
        return runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }

    /** After a run wrote its row: says so, and waits while the test holds the key. */
    public void pauseIfHeld(String key) {
        CountDownLatch start = started.get(key);
        if (start != null) {
            start.countDown();
        }
        CountDownLatch gate = gates.get(key);
        if (gate != null) {
            try {
                if (!gate.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("The test never let " + key + " go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Holds the next runs of this key after their row is written, until {@link #release}; answers a latch opened by the first. */
    public CountDownLatch hold(String key) {
        gates.put(key, new CountDownLatch(1));
        CountDownLatch start = new CountDownLatch(1);
        started.put(key, start);
        return start;
    }

    public void release(String key) {
        CountDownLatch gate = gates.remove(key);
        if (gate != null) {
            gate.countDown();
        }
    }

    /** Times the business code ran for this key, rolled back runs included. */
    public int runs(String key) {
        AtomicInteger n = runs.get(key);
        return n == null ? 0 : n.get();
    }

    /** The database's product name, as its driver gives it. */
    public String database() {
        try (Connection c = dataSource.getConnection()) {
            return c.getMetaData().getDatabaseProductName();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Committed charge rows of this key. */
    public int rows(String key) {
        return count("SELECT COUNT(*) FROM charge WHERE idem_key = ?", key);
    }

    /** Committed payment rows (the JPA unit's) of this key. */
    public int payments(String key) {
        return count("SELECT COUNT(*) FROM payment WHERE idem_key = ?", key);
    }

    /** Idempotency records of this key, in any namespace, as the caller's transaction sees them. */
    public int records(String key) {
        return count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", key);
    }

    private int count(String sql, String key) {
        try (Connection c = dataSource.getConnection(); PreparedStatement q = c.prepareStatement(sql)) {
            q.setString(1, key);
            try (ResultSet r = q.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
