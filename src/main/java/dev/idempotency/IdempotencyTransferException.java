package dev.idempotency;

/**
 * {@link IdempotencyManager#export} or {@link IdempotencyManager#importFrom} failed: the file cannot be
 * written or read, or it is not a complete export of a known version. The store is left as it was.
 */
public class IdempotencyTransferException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyTransferException(String message) {
        super(message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key or setting concerned
     * @param cause   the failure that caused it
     */
    public IdempotencyTransferException(String message, Throwable cause) {
        super(message, cause);
    }
}
