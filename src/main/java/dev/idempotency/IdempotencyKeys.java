package dev.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Keys for what an idempotent call sends on: a message that an {@link Idempotent} method, an idempotent resource method
 * or an {@link Idempotency} call publishes (with an {@code Emitter}, a JMS producer, a broker's client) carries a key
 * derived from the call's own, so that the consumer of that message runs it once however often the call is retried.
 *
 * <p>A broker's send is not part of the call's transaction: a call that sent its message and then failed, or whose
 * JVM died before its commit, is retried, and the retry sends again. With the derived key in the message's
 * {@value #HEADER} header, the library's consumer door (which reads that header by default) takes the second message
 * for a duplicate of the first (a consumer that names its key's header with {@code messageProperty} reads that one
 * instead):
 *
 * <pre>{@code
 * @POST @Idempotent            // in a resource class that is a CDI bean (@RequestScoped, say)
 * public Response place(Order order) {
 *     orders.send(Message.of(order).addMetadata(OutgoingKafkaRecordMetadata.builder()
 *             .withHeaders(new RecordHeaders().add(IdempotencyKeys.HEADER, IdempotencyKeys.derive("order-placed").getBytes(UTF_8)))
 *             .build()));
 *     ...
 * }
 * }</pre>
 *
 * <p>The derived key depends on the call's key (its namespace, caller and key) and on the name the application gives
 * the message, nothing else: the same on every retry of the call, another for another call or another name. A call that
 * sends several messages names each (by what it is about: {@code "line-" + line.id()}), not by a counter, which a retry
 * that takes another branch would shift.
 */
public final class IdempotencyKeys {

    /**
     * The header (a Kafka or RabbitMQ header, an AMQP 1.0 application property) that the consumer door reads by default,
     * before the record's position or the message's id. A name of the library's own, not {@code Idempotency-Key}: a
     * gateway that copies a client's {@code Idempotency-Key} into every message it sends would otherwise make its
     * messages one.
     */
    public static final String HEADER = "Idempotency-Derived-Key";

    /**
     * The record id of the idempotent call that runs on this thread (the digest of its namespace, caller and key, asked
     * for only when a key is derived), set by the library's doors around the call's work.
     */
    private static final ThreadLocal<Supplier<String>> CURRENT = new ThreadLocal<>();
    /** Marks a call that runs unprotected (no key, or idempotency off): its messages get keys of their own. */
    private static final Supplier<String> UNPROTECTED = () -> "unprotected";

    private IdempotencyKeys() {
    }

    /**
     * The key of the message {@code name} that the idempotent call running on this thread sends: a UUID's text (36
     * printable characters: a consumer's {@code idempotency.max-key-length} must allow 36), derived from the call's key
     * and the name. Where the call runs unprotected (its key is optional and it has none, or the method's idempotency is
     * switched off), a random UUID's text: its messages are not de-duplicated, as the call is not.
     *
     * @param name what the message is, among those this call sends (not empty)
     * @return the same text on every retry of this call, for this name
     * @throws IdempotencyKeyMissingException where no idempotent call's work runs on this thread (outside one, or on
     *                                        another thread than the call's, such as a {@code CompletionStage}'s
     *                                        continuation)
     */
    public static String derive(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("A derived key needs the name of the message it is for");
        }
        Supplier<String> call = CURRENT.get();
        if (call == UNPROTECTED) {
            return UUID.randomUUID().toString();
        }
        if (call == null) {
            throw new IdempotencyKeyMissingException("No idempotent call runs on this thread: a key is derived inside the work"
                    + " of an @Idempotent method, an idempotent resource method of a CDI bean (a resource class with a scope,"
                    + " such as @RequestScoped) or an Idempotency call, on its thread");
        }
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
        for (String part : new String[] {"derived/1", call.get(), name}) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            sha.update((byte) (bytes.length >>> 24));
            sha.update((byte) (bytes.length >>> 16));
            sha.update((byte) (bytes.length >>> 8));
            sha.update((byte) bytes.length);
            sha.update(bytes);
        }
        byte[] d = sha.digest();
        d[6] = (byte) ((d[6] & 0x0f) | 0x80); // version 8 (RFC 9562: a custom, here name-based, UUID)
        d[8] = (byte) ((d[8] & 0x3f) | 0x80); // the RFC's variant
        long high = 0;
        long low = 0;
        for (int i = 0; i < 8; i++) {
            high = (high << 8) | (d[i] & 0xff);
            low = (low << 8) | (d[8 + i] & 0xff);
        }
        return new UUID(high, low).toString();
    }

    /**
     * Set by the library's doors (through a private lookup) around the work of a call that runs unprotected.
     *
     * @return the key it replaces, to be put back when the work ends
     */
    @SuppressWarnings("unused")
    private static Supplier<String> enterUnprotected() {
        return enter(UNPROTECTED);
    }

    /**
     * Set by the library's doors (through a private lookup) around a call's work: the call's record id, or {@code null}.
     *
     * @return the key it replaces, to be put back when the work ends (a call inside another's work)
     */
    private static Supplier<String> enter(Supplier<String> call) {
        Supplier<String> outer = CURRENT.get();
        if (call == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(call);
        }
        return outer;
    }
}
