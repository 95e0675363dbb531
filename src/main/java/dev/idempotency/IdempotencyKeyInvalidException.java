package dev.idempotency;

/** The key is malformed: longer than allowed, or with characters outside printable ASCII. Nothing ran. */
public class IdempotencyKeyInvalidException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyKeyInvalidException(String message) {
        super(message);
    }
}
