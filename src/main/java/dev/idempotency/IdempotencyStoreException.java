package dev.idempotency;

/**
 * The store could not be read or written (database down, lock timeout). When it is thrown before the
 * operation, the operation did not run (fail closed). Thrown when the commit of a transaction the library began around
 * the operation lost the database's connection (a database failing over), the operation ran and its commit may or may
 * not have taken place: a retry replays the answer if it did, and runs the operation if not.
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
