package dev.idempotency;

/**
 * A mistake in an annotation or a configuration value. Reported at deployment (the deployment fails with
 * this message), never at the first call.
 */
public class IdempotencyConfigurationException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyConfigurationException(String message) {
        super(message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key or setting concerned
     * @param cause   the failure that caused it
     */
    public IdempotencyConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
