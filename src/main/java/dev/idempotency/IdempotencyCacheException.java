package dev.idempotency;

/**
 * A cache shared with other nodes (the built-in cluster, Infinispan Server) could not be told in time of a record an
 * operator's deletion was about to delete: the deletion stopped before that record, which stays (deleted without
 * the cache being told, the other nodes could go on answering it from their copy). Records deleted before it stay
 * deleted; run the deletion again once the cache answers (the readiness check and the log say when).
 */
public class IdempotencyCacheException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key concerned
     * @param cause   the failure that caused it, if any
     */
    public IdempotencyCacheException(String message, Throwable cause) {
        super(message, cause);
    }
}
