package dev.idempotency;

/**
 * The store could not be read or written (database down, lock timeout). When it is thrown before the
 * operation, the operation did not run (fail closed).
 */
public class IdempotencyStoreException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key or setting concerned
     * @param cause   the failure that caused it
     */
    public IdempotencyStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyStoreException(String message) {
        super(message);
    }
}
