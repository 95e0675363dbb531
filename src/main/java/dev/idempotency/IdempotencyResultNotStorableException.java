package dev.idempotency;

/**
 * The method ran, but its result could not be written in its stored form (JSON-B failed on the value, for
 * example a getter that threw). Nothing is kept for the key: the key is released at once (a leased claim) or
 * its claim goes with the transaction (an atomic claim), so a retry runs the method again instead of waiting
 * out a lease. The cause is the encoder's exception; the message names the method and the key, never the value.
 */
public class IdempotencyResultNotStorableException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and its cause.
     *
     * @param message what went wrong, naming the key or setting concerned
     * @param cause   the failure that caused it
     */
    public IdempotencyResultNotStorableException(String message, Throwable cause) {
        super(message, cause);
    }
}
