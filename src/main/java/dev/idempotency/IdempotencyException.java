package dev.idempotency;

/**
 * Root of every exception this library throws at run time. Messages name the scope and the key, never the
 * request or the stored response.
 */
public class IdempotencyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IdempotencyException(String message) {
        super(message);
    }

    public IdempotencyException(String message, Throwable cause) {
        super(message, cause);
    }
}
