package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Function;

/**
 * How the JPA store runs its work: in a transaction of its own, or inside the caller's. Two
 * implementations: resource-local (Java SE) and JTA (a Jakarta EE server, or Narayana in Java SE).
 */
public interface JpaTransactions {

    /** Runs the work in a new transaction that commits before this returns (the caller's is suspended). */
    <T> T inNewTransaction(Function<EntityManager, T> work);

    /**
     * Runs the work inside the caller's active transaction when there is one this store can join, else in a
     * new transaction. The answer says which.
     */
    <T> T inCurrentTransaction(Function<EntityManager, T> work);

    /** Whether {@link #inCurrentTransaction} would join the caller's transaction right now. */
    boolean canJoin();

    /**
     * Whether {@link #onJoinedConnection} can run plain JDBC on the caller's transaction: the store's hot statements
     * (an atomic claim's insert, its completion) then skip the JPA provider's query handling, which costs more than the
     * statement itself on a fast database.
     */
    default boolean hasJoinedConnections() {
        return false;
    }

    /**
     * Runs JDBC work on a connection of the caller's active transaction (the data source enlists it, and hands out
     * the connection the transaction already holds). Only when {@link #hasJoinedConnections()} and {@link #canJoin()}.
     */
    default <T> T onJoinedConnection(ConnectionWork<T> work) {
        throw new UnsupportedOperationException("No data source to join");
    }

    /** JDBC work on a connection that is not to be committed or closed by it. */
    @FunctionalInterface
    interface ConnectionWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Sends one of the store's statements in the current transaction: in plain JDBC on the connection an active
     * transaction holds, where the store can join it, else through the entity manager ({@link #inCurrentTransaction}).
     * Returns the rows it wrote.
     */
    default int execute(NativeStatement statement) {
        return hasJoinedConnections() && canJoin() ? onJoinedConnection(statement::executeOn)
                : inCurrentTransaction(statement::executeOn);
    }
}
