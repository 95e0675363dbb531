package dev.idempotency.runtime;

/**
 * What the interceptor needs from the arguments of one {@code @Idempotent} method: the key, the fingerprint, and, for a
 * message consumer, how its message is answered. Chosen once per method when the application starts (by the wiring,
 * from the method's signature: plain arguments, a JMS message, a Reactive Messaging record of a broker), so that the
 * interceptor names no message type: a kind of message is one reader, and adding one touches no door.
 */
public interface CallReader {

    /** The key as the arguments carry it, before the key rules are applied; {@code null} when they carry none. */
    Object key(Object[] args);

    /** Why these arguments carry no key, for the message of a refused call ("its @IdempotencyKey parameter is null"). */
    String noKey(Object[] args);

    /** The request's fingerprint (SHA-256, hex): what makes a retry the same request. */
    String fingerprint(Object[] args, JsonCodec codec);

    /**
     * How this call's message is answered, or {@code null} for a method whose return value is stored and replayed (every
     * method but a message consumer's).
     *
     * @param transactionRegistry the JTA {@code TransactionSynchronizationRegistry}, or {@code null} where there is none;
     *                            asked for only by a consumer's delivery, so that a plain call pays nothing for it
     */
    default Delivery delivery(Object[] args, java.util.function.Supplier<Object> transactionRegistry) {
        return null;
    }
}
