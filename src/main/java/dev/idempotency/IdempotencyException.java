package dev.idempotency;

/**
 * Root of every exception this library throws at run time. Messages name the scope and the key, never the
 * request or the stored response.
 */
public class IdempotencyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyException(String message) {
        super(message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key or setting concerned
     * @param cause   the failure that caused it
     */
    public IdempotencyException(String message, Throwable cause) {
        super(message, cause);
    }
}
