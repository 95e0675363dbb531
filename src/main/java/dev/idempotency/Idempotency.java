package dev.idempotency;

import java.util.concurrent.Callable;

/**
 * Idempotency without an annotation: run a piece of work at most once per (namespace, caller, key), through the same
 * store, cache, claim modes, fingerprints, metrics and events as {@link Idempotent}. For a lambda, a key computed at
 * run time, each item of a batch, or code that is not a CDI bean method. Inject it:
 *
 * <pre>{@code
 * @Inject Idempotency idempotency;
 *
 * Receipt receipt = idempotency.call("payments", key, request, Receipt.class, () -> card.charge(request));
 * }</pre>
 *
 * <p>{@code work} runs at most once per key; a retry with an equal {@code request} gets the stored result back; another
 * request with the same key is refused ({@link IdempotencyKeyReusedException}). Options other than the defaults
 * (configuration: {@code idempotency.ttl}, {@code idempotency.claim} and the rest) come from {@link #with}.
 */
public interface Idempotency {

    /**
     * Runs {@code work} once for the key, or returns the result it stored.
     *
     * @param namespace  where keys are unique (1 to 200 characters), as {@link Idempotent#namespace()}
     * @param key        the client's key; {@code null} or blank: refused ({@link IdempotencyKeyMissingException}) unless
     *                   the options say it is not required, when the work then runs unprotected
     * @param request    what makes the request this request (serialised to JSON and fingerprinted); may be {@code null}
     * @param resultType the type of the stored result ({@code Void.class} for none)
     * @param work       the work
     * @param <R>        the result's type
     * @return the result of the work, run now or before
     * @throws IdempotencyKeyReusedException          the key was used for another request
     * @throws IdempotencyInProgressException         another call with the key runs ({@code REJECT}, or past the wait)
     * @throws IdempotencyKeyMissingException         no key where one is required; nothing ran
     * @throws IdempotencyKeyInvalidException         a key that is too long or has control characters; nothing ran
     * @throws IdempotencyConfigurationException      a result type that cannot be stored, or a claim mode that cannot
     *                                                work here; nothing ran
     * @throws IdempotencyResultNotStorableException  the work ran but its result could not be stored; the key is free
     * @throws Exception                              what the work threw (or, replayed, a kept failure)
     */
    <R> R call(String namespace, String key, Object request, Class<R> resultType, Callable<R> work) throws Exception;

    /**
     * As {@link #call}, and says whether the work ran now or its stored result was replayed (and when it first ran):
     * for counting what was done (payments made), not what was answered.
     */
    <R> IdempotentResult<R> execute(String namespace, String key, Object request, Class<R> resultType, Callable<R> work)
            throws Exception;

    /** The same, with these options in place of the configured defaults. */
    Idempotency with(IdempotencyOptions options);
}
