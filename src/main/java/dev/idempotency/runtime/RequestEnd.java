package dev.idempotency.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What must not outlive the request: a claim the HTTP door took in its request filter and settles in its response
 * filter or its writer. When neither runs (an application's response filter threw before the library's, a client
 * went away), the claim is settled here, when the container ends the request's context, on the request's thread:
 * else its transaction stays open on a pooled thread and its key stays held.
 *
 * <p>Created only for requests that claim a key: the others pay nothing.
 */
@RequestScoped
public class RequestEnd {

    private static final Logger LOG = Logger.getLogger(RequestEnd.class.getName());

    /** The key of the request's call, once the door read it: what the keys of the messages it sends derive from. */
    private volatile dev.idempotency.spi.ScopedKey callKey;

    /** Claims not settled yet, by identity (a claim does not override equals), and how to settle each. */
    private final Map<Object, Runnable> open = new ConcurrentHashMap<>(2);

    /** The request's call has this key (as the store sees it). */
    public void callKey(dev.idempotency.spi.ScopedKey key) {
        callKey = key;
    }

    /** The request's call's key, or {@code null} where the door has not read one. */
    public dev.idempotency.spi.ScopedKey callKey() {
        return callKey;
    }

    /**
     * Settles {@code claim} with {@code settle} when the request ends, unless {@link #take} took it first.
     *
     * @return this request's instance itself, not the container's proxy: the door may take the claim back on another
     *         thread, where this request's context is not active
     */
    public RequestEnd settleAtEnd(Object claim, Runnable settle) {
        open.put(claim, settle);
        return this;
    }

    /**
     * The door settles the claim itself: it is no longer the request end's.
     *
     * @return whether it was still open; {@code false}: the request end settled it already, and the door must not
     */
    public boolean take(Object claim) {
        return open.remove(claim) != null;
    }

    @PreDestroy
    void end() {
        for (Object claim : open.keySet()) {
            Runnable settle = open.remove(claim);
            if (settle == null) {
                continue; // the door took it meanwhile
            }
            try {
                settle.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Could not settle a claim left open at the end of its request", e);
            }
        }
    }
}
