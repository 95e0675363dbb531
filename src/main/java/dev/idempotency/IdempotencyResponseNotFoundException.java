package dev.idempotency;

/** {@link IdempotencyManager#retrieve} found no response stored for the request. */
public class IdempotencyResponseNotFoundException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyResponseNotFoundException(String message) {
        super(message);
    }
}
