package dev.idempotency;

/**
 * A mistake in an annotation or a configuration value. Reported at deployment (the deployment fails with
 * this message), never at the first call.
 */
public class IdempotencyConfigurationException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public IdempotencyConfigurationException(String message) {
        super(message);
    }

    public IdempotencyConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
