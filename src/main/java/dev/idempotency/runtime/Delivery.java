package dev.idempotency.runtime;

import jakarta.interceptor.InvocationContext;

import java.util.function.Supplier;

/**
 * One call of a message consumer, as the interceptor drives it: a consumer stores no value (that it ran is the answer),
 * and its message is acknowledged or refused by what happened, not by what the method returned. The interceptor calls,
 * in this order: {@link #prepare}, then, around each run of the work, {@link #attempt} and {@link #ran}, then
 * {@link #returned}, and last {@link #answer} (the work ran) or {@link #duplicate} (an earlier delivery's outcome);
 * {@link #refused} when the call failed, {@link #withoutKey} for a message that has no key and needs none.
 */
public interface Delivery {

    /** Before the work: the arguments the method gets (a message whose acknowledgement waits for its transaction). */
    void prepare(InvocationContext ctx);

    /** The work is about to run (again: an optimistic claim may run it twice). */
    void attempt();

    /**
     * The key's answer is another call's, replayed to this one: whatever a run of the work here asked for (an
     * acknowledgement, a refusal; its work rolled back, and a failure it kept was not stored) is void, and the record is
     * answered as that call's duplicate.
     */
    default void superseded() {
    }

    /**
     * The work returned {@code result}, inside its transaction: a message the method refused, or a stage that already
     * failed, is its failure (thrown); else what to hand back once the call ends.
     */
    Object ran(Object result) throws Exception;

    /**
     * Whether this failure of the call is released whatever {@code keepOn} says (a failure of the library's own, such
     * as work that did not all happen): the message's redelivery then runs.
     */
    default boolean releases(Throwable failure) {
        return false;
    }

    /** The call returned normally: the library's part is done. */
    void returned();

    /** What the container gets for a call whose work ran: {@code kept} is what {@link #ran} returned. */
    Object answer(Object kept);

    /**
     * What the container gets for a duplicate of a message handled before.
     *
     * @param keptFailure the first delivery's kept failure, decoded when asked for; {@code null} when it succeeded
     */
    Object duplicate(Supplier<Throwable> keptFailure) throws Exception;

    /** The call failed with {@code failure}: what the container gets (the message refused), or the failure thrown. */
    Object refused(Exception failure) throws Exception;

    /** A message with no key, which needs none: it runs as without the library, and is answered as a keyed one. */
    Object withoutKey(InvocationContext ctx) throws Exception;
}
