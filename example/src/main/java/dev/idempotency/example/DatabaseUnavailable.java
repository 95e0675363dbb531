package dev.idempotency.example;

import dev.idempotency.IdempotencyStoreException;

import jakarta.ejb.EJBException;
import jakarta.persistence.PersistenceException;
import jakarta.transaction.TransactionalException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A request whose database went away under it (the connection lost mid-statement, refused, or not to be had
 * from the pool) is answered {@code 503} problem {@value Problems#DATABASE_UNAVAILABLE} with
 * {@code Retry-After: 1} ({@link Problems#databaseUnavailable()}), not with a 500: the client may retry the
 * same request. On an {@code @Idempotent} resource the library's filter then sees a 503, which is not a kept
 * status: the request's transaction rolls back (the claim with it) and the key is free for the retry.
 *
 * <p>The exceptions a lost database arrives in, each with its cause chain: JPA's {@link PersistenceException}
 * (EclipseLink's {@code DatabaseException}, Hibernate's {@code JDBCConnectionException} are its causes or
 * subclasses), a {@code @Transactional} method's {@link TransactionalException} (a failed commit), an EJB's
 * {@link EJBException}, and the library's {@link IdempotencyStoreException} where its interceptor guards a
 * service method ({@code POST /api/transfers}: the store is this same database). One mapper per type
 * ({@link OnPersistence}, {@link OnTransactional}, {@link OnEjb}, {@link OnIdempotencyStore}), so that nothing
 * else reaches them: the card failure of {@code "fail": true} (an {@code IllegalStateException})
 * and every other exception keep their answers. The database is judged lost when the chain
 * ({@link Throwable#getCause()}, {@link SQLException#getNextException()}) holds a
 * {@link SQLTransientConnectionException}, a {@link SQLRecoverableException}, a
 * {@link SQLNonTransientConnectionException} or an SQLState of class {@code 08} (connection exception), or
 * the pool's {@code jakarta.resource.ResourceException} (matched by name: the connector API need not be
 * visible to the application). An exception of these types for any other reason is still a {@code 500}
 * (without a body: the server's status page; logged here) or the response of a {@link WebApplicationException}
 * in its chain.
 */
public final class DatabaseUnavailable {

    private static final Logger LOG = Logger.getLogger(DatabaseUnavailable.class.getName());
    private static final String RESOURCE_EXCEPTION = "jakarta.resource.ResourceException";
    /** A cause chain longer than this is not walked further. */
    private static final int MAX_CAUSES = 64;

    private DatabaseUnavailable() {
    }

    /** JPA's exception: a statement, a query, a flush. */
    @Provider
    public static final class OnPersistence implements ExceptionMapper<PersistenceException> {
        @Override
        public Response toResponse(PersistenceException e) {
            return answer(e);
        }
    }

    /** A {@code @Transactional} method's own commit that failed. */
    @Provider
    public static final class OnTransactional implements ExceptionMapper<TransactionalException> {
        @Override
        public Response toResponse(TransactionalException e) {
            return answer(e);
        }
    }

    /** An enterprise bean's system exception. */
    @Provider
    public static final class OnEjb implements ExceptionMapper<EJBException> {
        @Override
        public Response toResponse(EJBException e) {
            return answer(e);
        }
    }

    /**
     * The library's interceptor door could not reach its store ({@code POST /api/transfers}); the guarded method
     * did not run, or its transaction rolls back.
     */
    @Provider
    public static final class OnIdempotencyStore implements ExceptionMapper<IdempotencyStoreException> {
        @Override
        public Response toResponse(IdempotencyStoreException e) {
            return answer(e);
        }
    }

    static Response answer(RuntimeException e) {
        Throwable lost = connectionFailure(e);
        if (lost != null) {
            LOG.log(Level.WARNING, "The database went away under a request; answering 503 (" + e.getClass().getName()
                    + ", caused by " + lost + ")");
            return Problems.databaseUnavailable();
        }
        WebApplicationException wae = first(e, WebApplicationException.class);
        if (wae != null && wae.getResponse() != null) {
            return wae.getResponse();
        }
        LOG.log(Level.SEVERE, "A request failed", e);
        return Response.serverError().build();
    }

    /** The first exception in {@code e}'s causes that says the database connection was lost, or null. */
    static Throwable connectionFailure(Throwable e) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Throwable> todo = new ArrayDeque<>();
        todo.add(e);
        while (!todo.isEmpty() && seen.size() < MAX_CAUSES) {
            Throwable t = todo.poll();
            if (!seen.add(t)) {
                continue;
            }
            if (t instanceof SQLTransientConnectionException || t instanceof SQLRecoverableException
                    || t instanceof SQLNonTransientConnectionException || isA(t, RESOURCE_EXCEPTION)) {
                return t;
            }
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state != null && state.startsWith("08")) {
                    return t;
                }
                if (sql.getNextException() != null) {
                    todo.add(sql.getNextException());
                }
            }
            if (t.getCause() != null) {
                todo.add(t.getCause());
            }
        }
        return null;
    }

    private static <T extends Throwable> T first(Throwable e, Class<T> type) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = e; t != null && seen.add(t) && seen.size() <= MAX_CAUSES; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static boolean isA(Throwable t, String className) {
        for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals(className)) {
                return true;
            }
        }
        return false;
    }
}
