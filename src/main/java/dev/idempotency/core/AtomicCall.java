package dev.idempotency.core;

/**
 * What a door runs under a claim ({@link ClaimFlow#run}): the operation, and how its outcome is stored.
 *
 * @param <R> the operation's result
 */
public interface AtomicCall<R> {

    /** Runs the operation, inside the transaction that holds the claim. */
    R run() throws Exception;

    /** The bytes stored for a result, and replayed to every retry. */
    byte[] response(R result);

    /** Whether a failure is a final outcome to keep ({@code FAILED}, replayed) rather than to release. */
    boolean keeps(Throwable failure);

    /** The bytes stored for a kept failure. */
    byte[] failure(Throwable failure);

    /**
     * Whether {@link #run()} returns a {@code CompletionStage} whose outcome is the call's (a leased claim is then settled
     * when it completes, and {@link #response} is given its value).
     */
    default boolean async() {
        return false;
    }
}
