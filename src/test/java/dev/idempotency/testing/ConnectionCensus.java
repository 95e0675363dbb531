package dev.idempotency.testing;

import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link DataSource} in front of a real pool that counts, for each JTA transaction, the handles asked for and the
 * physical connections they stood for (a handle's {@code unwrap(Connection.class)}: the driver's own connection), and
 * the handles that are open at once. What one call held is the figure of its transaction: a call that takes a second
 * physical connection while its transaction holds one shows 2.
 */
public final class ConnectionCensus extends dev.idempotency.store.jpa.DelegatingDataSource {

    private final TransactionSynchronizationRegistry tsr;
    private final Map<Object, Set<Object>> physicalByTransaction = new ConcurrentHashMap<>();
    private final Map<Object, AtomicInteger> handlesByTransaction = new ConcurrentHashMap<>();
    private final AtomicInteger mostPhysicalInOneTransaction = new AtomicInteger();
    private final AtomicInteger mostHandlesInOneTransaction = new AtomicInteger();
    private final AtomicLong handles = new AtomicLong();
    private final AtomicLong outsideTransactions = new AtomicLong();

    public ConnectionCensus(DataSource pool, TransactionSynchronizationRegistry tsr) {
        super(pool);
        this.tsr = tsr;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return counted(pool().getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return counted(pool().getConnection(username, password));
    }

    private Connection counted(Connection handle) throws SQLException {
        handles.incrementAndGet();
        Object tx = tsr.getTransactionKey();
        if (tx == null) {
            outsideTransactions.incrementAndGet();
            return handle;
        }
        Object physical = handle.unwrap(Connection.class);
        if (physical == handle) {
            throw new AssertionError("The pool's handle does not unwrap to the driver's connection: cannot count");
        }
        Set<Object> held = physicalByTransaction.computeIfAbsent(tx, k -> Collections.synchronizedSet(
                Collections.newSetFromMap(new IdentityHashMap<>())));
        held.add(physical);
        mostPhysicalInOneTransaction.accumulateAndGet(held.size(), Math::max);
        mostHandlesInOneTransaction.accumulateAndGet(
                handlesByTransaction.computeIfAbsent(tx, k -> new AtomicInteger()).incrementAndGet(), Math::max);
        return handle;
    }

    /** The most physical connections one transaction was handed. */
    public int mostPhysicalInOneTransaction() {
        return mostPhysicalInOneTransaction.get();
    }

    /** The most handles one transaction asked for (the library's and the application's). */
    public int mostHandlesInOneTransaction() {
        return mostHandlesInOneTransaction.get();
    }

    /** Transactions seen so far. */
    public int transactions() {
        return physicalByTransaction.size();
    }

    /** Handles asked for so far, in transactions and outside them. */
    public long handles() {
        return handles.get();
    }

    public long handlesOutsideTransactions() {
        return outsideTransactions.get();
    }

    public void reset() {
        physicalByTransaction.clear();
        handlesByTransaction.clear();
        mostPhysicalInOneTransaction.set(0);
        mostHandlesInOneTransaction.set(0);
        handles.set(0);
        outsideTransactions.set(0);
    }
}
