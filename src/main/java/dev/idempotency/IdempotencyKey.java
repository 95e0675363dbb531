package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the client's idempotency key of an {@link Idempotent} method: one of its parameters, or, inside a parameter's
 * type (one level deep), a record component, field or getter, so that a command that carries its own key
 * ({@code record CreateOrder(@IdempotencyKey UUID orderId, ...)}) is passed as it is. Its {@code toString()} is the
 * key: a {@code String}, {@code UUID}, number or any value object with a stable {@code toString()}. 1 to 255
 * characters. Exactly one key per method: two marked parameters, two marked members of one type, or a marked
 * parameter and a marked member fail the deployment, as does a marked member of a bean class that is no
 * {@code @Idempotent} method's parameter type. The other parameters, and the rest of the argument that carries the
 * key (its JSON-B form without the key's property), make up the request's fingerprint.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.FIELD, ElementType.METHOD})
public @interface IdempotencyKey {
}
