package dev.idempotency;

/**
 * The key was first used for a different request (another fingerprint): a client bug, not a retry.
 * Nothing ran.
 */
public class IdempotencyKeyReusedException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyKeyReusedException(String message) {
        super(message);
    }
}
