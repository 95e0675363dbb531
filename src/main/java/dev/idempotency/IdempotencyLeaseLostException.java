package dev.idempotency;

/**
 * This call's claim on its key was lost: its lease expired and another node took the key over. Its
 * completion is refused, and an active transaction around it is marked for rollback, so that the
 * operation's effects are not committed twice.
 */
public class IdempotencyLeaseLostException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyLeaseLostException(String message) {
        super(message);
    }
}
