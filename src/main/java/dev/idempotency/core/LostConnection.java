package dev.idempotency.core;

import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Whether a failure is the database's connection lost (its server gone, killed or failing over), anywhere in the
 * failure: its causes and what it suppressed (a transaction manager reports its resource's failure as suppressed).
 * In JDBC's words: a {@link SQLException} of SQLState class {@code 08} (connection exception) or PostgreSQL's
 * {@code 57P01}-{@code 57P03} (the server shutting down or not yet accepting), a connection exception type, or the
 * socket's own failure.
 */
final class LostConnection {

    /** PostgreSQL: an administrator's or a crash's shutdown, or a server not yet accepting connections. */
    private static final Set<String> SHUTTING_DOWN = Set.of("57P01", "57P02", "57P03");

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(IdempotencyEngine.class.getName());

    private LostConnection() {
    }

    /**
     * The store's failure for a commit of the library's transaction (the work, its claim and its answer) whose connection
     * failed: whether the database committed is unknown, and a retry finds out (the answer replayed if it did, the work
     * run if not). Over HTTP a {@code 503} with {@code Retry-After}, as any store failure.
     */
    static dev.idempotency.IdempotencyStoreException atCommit(dev.idempotency.spi.ScopedKey key, Throwable failure) {
        dev.idempotency.IdempotencyStoreException unknown = new dev.idempotency.IdempotencyStoreException(
                "Could not commit the work and the answer of the " + key + ": the database's connection failed during the"
                        + " commit, which may or may not have taken place; a retry replays the answer if it did, and runs"
                        + " the work if not", failure);
        LOG.log(java.util.logging.Level.WARNING, unknown.getMessage(), failure);
        return unknown;
    }

    /**
     * What a call is answered when its transaction's commit failed after the work returned ({@code returned}; {@code null}
     * when it threw, and then nothing is said here): the step in hand when the work did not run (a replay, or "blocked":
     * its transaction wrote nothing); the store's failure ({@link #atCommit}, counted) when it ran and the database's
     * connection was lost. {@code null}: the failure is not the database's connection lost, and stays the caller's.
     */
    static <T> AtomicClaimLoop.Step<T> afterCommit(dev.idempotency.spi.ScopedKey key, Exception failure,
                                                   AtomicClaimLoop.Step<T> returned, EngineObserver observer) {
        if (returned == null || !in(failure)) {
            return null;
        }
        if (!(returned instanceof AtomicClaimLoop.Step.Done<T>)) {
            return returned;
        }
        dev.idempotency.IdempotencyStoreException unknown = atCommit(key, failure);
        observer.storeError(key.namespace(), unknown);
        throw unknown;
    }

    static boolean in(Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Throwable> next = new ArrayDeque<>();
        next.add(failure);
        while (!next.isEmpty()) {
            Throwable t = next.poll();
            if (!seen.add(t)) {
                continue;
            }
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException
                    || t instanceof SocketException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || SHUTTING_DOWN.contains(sql.getSQLState()))) {
                return true;
            }
            if (t.getCause() != null) {
                next.add(t.getCause());
            }
            Collections.addAll(next, t.getSuppressed());
            if (t instanceof SQLException sql && sql.getNextException() != null) {
                next.add(sql.getNextException());
            }
        }
        return false;
    }
}
