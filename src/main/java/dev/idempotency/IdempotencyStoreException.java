package dev.idempotency;

/**
 * The store could not be read or written (database down, lock timeout). When it is thrown before the
 * operation, the operation did not run (fail closed).
 */
public class IdempotencyStoreException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public IdempotencyStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public IdempotencyStoreException(String message) {
        super(message);
    }
}
