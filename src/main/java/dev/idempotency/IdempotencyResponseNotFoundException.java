package dev.idempotency;

/** {@link IdempotencyManager#retrieve} found no response stored for the request. */
public class IdempotencyResponseNotFoundException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public IdempotencyResponseNotFoundException(String message) {
        super(message);
    }
}
