package dev.idempotency;

/** A key is required and the call carried none (a {@code null} or blank key). Nothing ran. */
public class IdempotencyKeyMissingException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyKeyMissingException(String message) {
        super(message);
    }
}
