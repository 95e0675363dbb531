package dev.idempotency;

/**
 * The key was already claimed earlier in the same transaction, by a call whose outcome that transaction has not
 * committed yet: a second call with one key inside one transaction (or a re-entrant one). Thrown at once, before
 * the method runs: the second claim would otherwise wait on the transaction's own row lock until it timed out.
 * Call the method once per transaction and keep its result, or give each call its own key.
 */
public class IdempotencyKeyClaimedInTransactionException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message.
     *
     * @param message what went wrong, naming the key or setting concerned
     */
    public IdempotencyKeyClaimedInTransactionException(String message) {
        super(message);
    }
}
