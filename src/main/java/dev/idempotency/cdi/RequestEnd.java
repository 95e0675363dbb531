package dev.idempotency.cdi;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

import java.util.IdentityHashMap;
import java.util.Map;
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

    private final Map<Object, Runnable> open = new IdentityHashMap<>(2);

    /** Settles {@code claim} with {@code settle} when the request ends, unless {@link #settled} was said first. */
    public void settleAtEnd(Object claim, Runnable settle) {
        open.put(claim, settle);
    }

    /** The claim was settled by its door. */
    public void settled(Object claim) {
        open.remove(claim);
    }

    @PreDestroy
    void end() {
        for (Runnable settle : open.values()) {
            try {
                settle.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Could not settle a claim left open at the end of its request", e);
            }
        }
        open.clear();
    }
}
