package dev.idempotency.config;

import dev.idempotency.ClaimMode;
import dev.idempotency.core.Policy;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.List;

/**
 * Everything the interceptor needs about one {@code @Idempotent} method, resolved once at deployment.
 *
 * @param method           the method
 * @param enabled          {@code Idempotent/enabled}
 * @param namespace        where its keys are unique
 * @param required         whether a call without a key fails
 * @param keySource        where the key comes from
 * @param keyIndex         the index of the {@code @IdempotencyKey} parameter, or of the parameter whose type carries
 *                         the key, or -1
 * @param keyInside        the key's member inside that parameter, or {@code null} when the parameter is the key
 * @param keepOn           exception types stored as {@code FAILED} and replayed
 * @param releaseOn        exception types that always release
 * @param policy           ttl, lease, wait
 * @param valueType        the type stored and replayed: the return type, or a {@code CompletionStage}'s
 *                         value type
 * @param async            whether the method returns a {@code CompletionStage}
 * @param voidResult       whether there is no value to store
 * @param http             the HTTP settings (used when the method is a JAX-RS resource method)
 * @param messageProperty  the JMS message property with the key, or {@code null} for the JMS message id
 * @param claim            how the key is claimed: {@link ClaimMode#ATOMIC}, {@link ClaimMode#LEASED}, or
 *                         {@link ClaimMode#DEFAULT} (atomic when the runtime can, else leased)
 * @param incoming         how an {@code @Incoming} method (MicroProfile Reactive Messaging) takes its record and
 *                         answers it, or {@code null} for any other method
 */
public record MethodSettings(
        Method method,
        boolean enabled,
        String namespace,
        boolean required,
        KeySource keySource,
        int keyIndex,
        KeyInside keyInside,
        List<Class<? extends Throwable>> keepOn,
        List<Class<? extends Throwable>> releaseOn,
        Policy policy,
        Type valueType,
        boolean async,
        boolean voidResult,
        HttpOptions http,
        String messageProperty,
        ClaimMode claim,
        Incoming incoming) {

    /**
     * An {@code @Incoming} method's shape: one record at a time, acknowledged once the method's transaction commits.
     *
     * @param takesMessage     whether it takes the {@code Message} (and acknowledges it itself), not the payload
     * @param takesRecord      whether it takes Kafka's {@code ConsumerRecord} as its payload
     * @param returnsStage     whether it returns a {@code CompletionStage} (its completion acknowledges the record)
     * @param nackKeptFailures whether a duplicate of a record whose failure was kept is refused (nacked), as its first
     *                         delivery was, rather than acknowledged (the default: the failure was the answer)
     * @param connector        the connector of the method's channel ({@code mp.messaging.incoming.<channel>.connector}:
     *                         {@code smallrye-kafka}, {@code smallrye-rabbitmq}, {@code smallrye-amqp}, ...), or
     *                         {@code null} where the configuration does not say
     */
    public record Incoming(boolean takesMessage, boolean takesRecord, boolean returnsStage, boolean nackKeptFailures,
                           String connector) {
    }

    /** Whether the outcome of this exception is kept ({@code FAILED}) rather than released. */
    public boolean keeps(Throwable t) {
        return keeps(t, keepOn, releaseOn);
    }

    /** Whether a failure is kept: one of the {@code keepOn} types and none of the {@code releaseOn} ones (which win). */
    public static boolean keeps(Throwable t, List<Class<? extends Throwable>> keepOn, List<Class<? extends Throwable>> releaseOn) {
        for (Class<? extends Throwable> c : releaseOn) {
            if (c.isInstance(t)) {
                return false;
            }
        }
        for (Class<? extends Throwable> c : keepOn) {
            if (c.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** The key as the arguments carry it: the key parameter, or the key inside its parameter. */
    public Object keyOf(Object[] args) {
        Object argument = args[keyIndex];
        return keyInside == null ? argument : keyInside.read(argument);
    }

    /** The method for messages: {@code com.acme.Payments#charge}. */
    public String describe() {
        return method.getDeclaringClass().getName() + "#" + method.getName();
    }
}
