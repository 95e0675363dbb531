package dev.idempotency;

/**
 * A request type that the configuration does not list, while {@code idempotency.request-types.default} is
 * {@code error}.
 */
public class IdempotencyRequestTypeException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyRequestTypeException(String message) {
        super(message);
    }
}
