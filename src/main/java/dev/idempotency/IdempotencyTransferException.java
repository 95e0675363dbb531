package dev.idempotency;

/**
 * {@link IdempotencyManager#export} or {@link IdempotencyManager#importFrom} failed: the file cannot be
 * written or read, or it is not a complete export of a known version. The store is left as it was.
 */
public class IdempotencyTransferException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public IdempotencyTransferException(String message) {
        super(message);
    }

    public IdempotencyTransferException(String message, Throwable cause) {
        super(message, cause);
    }
}
