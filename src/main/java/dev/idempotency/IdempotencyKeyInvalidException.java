package dev.idempotency;

/** The key is malformed: longer than allowed, or with characters outside printable ASCII. Nothing ran. */
public class IdempotencyKeyInvalidException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public IdempotencyKeyInvalidException(String message) {
        super(message);
    }
}
