package dev.idempotency.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What must not outlive the request: a claim the HTTP door took in its request filter and settles in its response
 * filter or its writer. When neither runs (an application's response filter threw before the library's, a client
 * went away), the claim is settled here, when the container ends the request's context, on the request's thread:
 * else its transaction stays open on a pooled thread and its key stays held. A resource that answers later, on another
 * thread, is followed to the end of its answer instead ({@link Claims#answerLater}): the request's context may end
 * before the answer comes.
 *
 * <p>Created only for requests that claim a key: the others pay nothing.
 */
@RequestScoped
public class RequestEnd {

    private static final Logger LOG = Logger.getLogger(RequestEnd.class.getName());

    private final Claims claims = new Claims();

    /**
     * The request's claims and its call's key: a plain object, not the container's proxy, that the door may use on another
     * thread (where this request's context is not active). Each call of the proxy looks the request's instance up again,
     * so a door takes this once and works on it.
     */
    public Claims claims() {
        return claims;
    }

    @PreDestroy
    void end() {
        claims.end();
    }

    /** The claims of one request that the door has not settled yet, and how to settle each. */
    public static final class Claims {

        /** Settled when the request ends, by identity (a claim does not override equals). */
        private final Map<Object, Runnable> open = new ConcurrentHashMap<>(2);
        /**
         * Whose answer comes later, on another thread (a suspended response, a stage): not settled when the request's
         * first dispatch ends, which may come before the answer, but once the answer was processed.
         */
        private final Map<Object, Runnable> later = new ConcurrentHashMap<>(2);
        /** Of those, the ones whose answer the runtime began to process (its response filters run), and on which thread. */
        private final Map<Object, Thread> answering = new ConcurrentHashMap<>(2);
        /** How the door follows an answer that comes later. */
        private volatile AnswerWatcher watcher;
        /** The key of the request's call, once the door read it: what the keys of the messages it sends derive from. */
        private volatile dev.idempotency.spi.ScopedKey callKey;

        Claims() {
        }

        /** The request's call has this key (as the store sees it). */
        public void callKey(dev.idempotency.spi.ScopedKey key) {
            callKey = key;
        }

        /** The request's call's key, or {@code null} where the door has not read one. */
        public dev.idempotency.spi.ScopedKey callKey() {
            return callKey;
        }

        /** Settles {@code claim} with {@code settle} when the request ends, unless {@link #take} took it first. */
        public void settleAtEnd(Object claim, Runnable settle) {
            open.put(claim, settle);
        }

        /**
         * Settles {@code claim}, whose answer comes later on another thread, with {@code settle} once its answer was
         * processed and the door did not take it ({@link #settleLeftOpen}): the door's watcher, made here for this
         * claim, hooks onto the answer before the resource method runs when an argument will carry it
         * ({@link #watchArguments}), else when the method returns ({@link #watchAnswer}).
         */
        public void answerLater(Object claim, Runnable settle, BiFunction<Claims, Object, AnswerWatcher> watcherFor) {
            later.put(claim, settle);
            watcher = watcherFor.apply(this, claim);
        }

        /**
         * The resource method is about to run: an answer its arguments will carry (a suspended response) is followed to
         * its end from now on, before the method can hand it to a thread that answers, and is done, before it returns.
         *
         * @param arguments the method's arguments
         */
        public void watchArguments(Object[] arguments) {
            AnswerWatcher w = watcher;
            if (w != null) {
                w.before(arguments);
            }
        }

        /**
         * The resource method returned: an answer that comes later is followed to its end (the door's watcher), so that a
         * claim its door never saw answered is settled then.
         *
         * @param arguments the method's arguments
         * @param result    what it returned
         * @return what to return in its place (the same, or a stage that completes with it)
         */
        public Object watchAnswer(Object[] arguments, Object result) {
            AnswerWatcher w = watcher;
            return w == null ? result : w.returned(arguments, result);
        }

        /** The runtime began to process the claim's answer: its response filters run, on this thread. */
        public void answering(Object claim) {
            if (claim != null && later.containsKey(claim)) {
                answering.putIfAbsent(claim, Thread.currentThread());
            }
        }

        /**
         * Whether the runtime began to process the claim's answer on this thread ({@link #answering}): called once that
         * thread is past it, the processing is over, whatever became of it. One begun on another thread may still run.
         */
        public boolean answeredHere(Object claim) {
            return answering.get(claim) == Thread.currentThread();
        }

        /** The claim's answer was processed: if its door did not take the claim, it is settled now. */
        public void settleLeftOpen(Object claim) {
            Runnable settle = later.remove(claim);
            if (settle != null) {
                run(settle);
            }
        }

        /**
         * The door settles the claim itself: it is no longer the request end's.
         *
         * @return whether it was still open; {@code false}: the request end settled it already, and the door must not
         */
        public boolean take(Object claim) {
            return open.remove(claim) != null || later.remove(claim) != null;
        }

        void end() {
            for (Object claim : open.keySet()) {
                Runnable settle = open.remove(claim);
                if (settle != null) { // else the door took it meanwhile
                    run(settle);
                }
            }
            // An answer that came later but was processed on this thread before the request's context ended (a stage
            // already complete when returned), and that the door did not take: settled here. One still to come, or under
            // way on another thread, is the watcher's.
            for (Object claim : answering.keySet()) {
                if (answeredHere(claim)) {
                    settleLeftOpen(claim);
                }
            }
        }

        /** How a door follows an answer that comes later, on another thread, to its end. */
        public interface AnswerWatcher {
            /** Before the method runs: hooks onto an answer its arguments will carry (a suspended response). */
            void before(Object[] arguments);

            /** The method returned: hooks onto an answer its result carries (a stage); what to return in its place. */
            Object returned(Object[] arguments, Object result);
        }

        private static void run(Runnable settle) {
            try {
                settle.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Could not settle a claim left open at the end of its request", e);
            }
        }
    }
}
