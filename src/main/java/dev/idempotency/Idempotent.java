package dev.idempotency;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated operation once per idempotency key; every retry with the same key gets the first
 * answer back.
 *
 * <p>On a JAX-RS resource method (or its class) the key is the {@code Idempotency-Key} request header and
 * the stored response is the HTTP response: status, body bytes and the replayable headers.
 *
 * <p>On a CDI bean, EJB or message-driven bean method (or on the class, for all its business methods) the
 * key comes from the parameter marked {@link IdempotencyKey}. The return value is stored with JSON-B and
 * replayed; {@code void} methods are de-duplicated. A concurrent duplicate gets
 * {@link IdempotencyInProgressException} or waits, see {@link #onConcurrent()}.
 *
 * <p>Every member can be overridden through MicroProfile Config, most specific first:
 * {@code <fqcn>/<method>/Idempotent/<member>}, {@code <fqcn>/Idempotent/<member>},
 * {@code Idempotent/<member>}, then the value written here, then the global {@code idempotency.*} key.
 * {@code Idempotent/enabled=false} (at any of those levels) switches the protection off. Mistakes (no key
 * source, two key parameters, a return type that cannot be stored, a bad configuration value) fail the
 * deployment with a message naming the method.
 */
@Inherited
@InterceptorBinding
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface Idempotent {

    /**
     * Where keys are unique. Empty (the default) means the method's identity,
     * {@code <fqcn>#<method>(<simple parameter types>)}. Name it when the key must survive a refactoring,
     * or when two methods must share (or must not share) keys. At most 200 characters.
     *
     * @return the namespace, or empty for the method's identity
     */
    @Nonbinding
    String namespace() default "";

    /**
     * Whether a call without a key is an error ({@link IdempotencyKeyMissingException}). {@code false}
     * lets a call without a key run, unprotected. When left {@code true}, the global
     * {@code idempotency.required} (default {@code true}) can still relax it for every method.
     *
     * @return whether a call without a key is an error
     */
    @Nonbinding
    boolean required() default true;

    /**
     * Exception types that are a final outcome: the first one is stored (type and message) as
     * {@code FAILED} and rethrown on every retry, which does not run the method again. Subtypes match.
     * Each type needs a public constructor taking a {@code String} (or none). Default: none; every
     * exception releases the key so that a retry runs again.
     *
     * @return the exception types stored as a final outcome
     */
    @Nonbinding
    Class<? extends Throwable>[] keepOn() default {};

    /**
     * Exception types that always release the key, even when they are also a subtype of a
     * {@link #keepOn()} type. Default: none.
     *
     * @return the exception types that always release the key
     */
    @Nonbinding
    Class<? extends Throwable>[] releaseOn() default {};

    /**
     * What a duplicate does while the first call is still running: fail at once with
     * {@link IdempotencyInProgressException} ({@link OnConcurrent#REJECT}), or wait up to
     * {@link #waitTimeout()} for the first call's result ({@link OnConcurrent#WAIT}). Default:
     * {@code idempotency.on-concurrent} ({@code reject}).
     *
     * @return what a duplicate does while the first call runs
     */
    @Nonbinding
    OnConcurrent onConcurrent() default OnConcurrent.DEFAULT;

    /**
     * How long a duplicate waits when {@link #onConcurrent()} is {@code WAIT}: an ISO-8601 duration
     * such as {@code PT5S}, zero or more. Empty means {@code idempotency.wait-timeout} ({@code PT10S}).
     *
     * @return the ISO-8601 wait, or empty for {@code idempotency.wait-timeout}
     */
    @Nonbinding
    String waitTimeout() default "";

    /**
     * How long a finished result is kept and replayed: an ISO-8601 duration, positive. Empty means
     * {@code idempotency.ttl} ({@code PT24H}).
     *
     * @return the ISO-8601 time to live, or empty for {@code idempotency.ttl}
     */
    @Nonbinding
    String ttl() default "";

    /**
     * How long a running call holds its key before another node may take over (the holder is presumed
     * dead): an ISO-8601 duration, positive, longer than the slowest call. Empty means
     * {@code idempotency.lease} ({@code PT1M}).
     *
     * @return the ISO-8601 lease, or empty for {@code idempotency.lease}
     */
    @Nonbinding
    String lease() default "";

    /**
     * How the key is claimed: {@link ClaimMode#ATOMIC} (one transaction for the claim, the work and the
     * result), {@link ClaimMode#LEASED} (a claim committed first and held by a lease), or
     * {@link ClaimMode#DEFAULT}: {@code idempotency.claim} ({@code auto}: atomic where a JTA transaction
     * manager is present and the method does not return a {@code CompletionStage}, else leased).
     * {@code ATOMIC} on a {@code CompletionStage} method, or where there is no transaction manager, fails the
     * deployment.
     *
     * @return how the key is claimed
     */
    @Nonbinding
    ClaimMode claim() default ClaimMode.DEFAULT;

    /**
     * Message consumers only: the property of the message that carries the key, a business id that survives a
     * re-publish. On a message listener ({@code onMessage(jakarta.jms.Message)}) a string property; empty (the default)
     * means the JMS message id, which only a redelivery keeps. On a Reactive Messaging {@code @Incoming} method a header
     * (Kafka, RabbitMQ) or application property (AMQP 1.0); empty means the header
     * {@value IdempotencyKeys#HEADER} where the message has one (a key derived by the sender,
     * {@link IdempotencyKeys#derive}), else the record's topic, partition and offset (Kafka) or the message-id
     * (RabbitMQ, AMQP 1.0).
     *
     * @return the message property carrying the key, or empty for the default
     */
    @Nonbinding
    String messageProperty() default "";

    /**
     * HTTP only: the request header that carries the key. Empty means {@code idempotency.header}
     * ({@code Idempotency-Key}).
     *
     * @return the header carrying the key, or empty for {@code idempotency.header}
     */
    @Nonbinding
    String header() default "";

    /**
     * HTTP only: the response statuses that are kept and replayed, as status classes ({@code 2xx}) or
     * codes ({@code 409}), comma-separated, and {@code !} before a class or a code to leave it out; any other status
     * releases the key. Empty means {@code idempotency.keep-status} ({@code 2xx,3xx,4xx,!408,!409,!423,!425,!429}:
     * every success, redirect and refusal but those that say "try again later").
     *
     * @return the statuses kept and replayed, or empty for {@code idempotency.keep-status}
     */
    @Nonbinding
    String keepStatus() default "";

    /**
     * HTTP only: the largest response body stored, in bytes; a larger one is not stored (its retry gets the
     * status and headers with an empty body, see the README). -1 means {@code idempotency.max-response-size}
     * (1 MiB).
     *
     * @return the largest body stored in bytes, or -1 for {@code idempotency.max-response-size}
     */
    @Nonbinding
    long maxResponseSize() default -1;

    /**
     * HTTP only: the largest request body read, in bytes, when the body is read at all (a keyed request, whose body
     * is fingerprinted, or a key taken from the body). A larger body is answered {@code 413} problem
     * {@code request-too-large} before it is read whole (at once when its {@code Content-Length} says so); nothing
     * runs and nothing is kept. The body is held in memory while the request is claimed, so this bounds what one
     * request can take. -1 means {@code idempotency.max-request-size} (1 MiB).
     *
     * @return the largest request body read in bytes, or -1 for {@code idempotency.max-request-size}
     */
    @Nonbinding
    long maxRequestSize() default -1;

    /**
     * HTTP only: when the store cannot be reached, run the request unprotected ({@code true}) instead of
     * answering 503 ({@code false}). Either this or {@code idempotency.fail-open} turns it on.
     *
     * @return whether the request runs unprotected when the store cannot be reached
     */
    @Nonbinding
    boolean failOpen() default false;

    /**
     * HTTP only: what a keyed request without an authenticated principal gets (its key would otherwise share one
     * {@code anonymous} scope with every other unauthenticated caller's): {@code "allow"} (that shared scope),
     * {@code "reject"} ({@code 401} problem {@code unauthenticated}; nothing runs), or {@code "header:<name>"}
     * (the scope is that request header's value, an API client id, as {@code anonymous:<value>}; a request
     * without it is {@code 401}, a malformed one {@code 400}). Empty means {@code idempotency.anonymous}
     * ({@code allow}). See the README's security section for which to choose.
     *
     * @return {@code allow}, {@code reject}, {@code header:<name>}, or empty for {@code idempotency.anonymous}
     */
    @Nonbinding
    String anonymous() default "";

    /**
     * HTTP only: a JSON Pointer (RFC 6901) to the field of the JSON request body that carries the key, such as
     * {@code "/orderId"}, for clients that send no header: the header's key is taken first when there is one
     * (see {@link #keyFromHeader()}), else this field's value (a string or a number). A body that is not JSON is
     * {@code 400} problem {@code body-invalid}; a body without the field is {@code 400} {@code key-missing} (or runs
     * unprotected with {@code required = false}); nothing runs. Empty (the default): the header only.
     *
     * @return the JSON Pointer to the key's field, or empty for the header only
     */
    @Nonbinding
    String keyFrom() default "";

    /**
     * HTTP only, with {@link #keyFrom()}: whether a key in the header is taken first ({@code true}, the default), or
     * only the body's field is ({@code false}; a header is then ignored).
     *
     * @return whether a key in the header is taken before the body's field
     */
    @Nonbinding
    boolean keyFromHeader() default true;

    /**
     * HTTP only: JSON Pointers to the body fields that make the request <em>this</em> request, such as
     * {@code {"/amount", "/currency"}}: the fingerprint covers the method, path, query, content type and these fields'
     * values (canonical JSON) instead of the whole body, so that a retry whose body differs elsewhere (a timestamp, a
     * client nonce) is the same request. A body that is not JSON, or lacks one of them, is {@code 400} problem
     * {@code body-invalid} or {@code body-field-missing}, and nothing runs. Empty (the default): the whole body.
     *
     * @return the JSON Pointers of the fingerprinted fields, or empty for the whole body
     */
    @Nonbinding
    String[] fingerprintFields() default {};
}
