package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the parameter of an {@link Idempotent} method that carries the client's idempotency key. Its
 * {@code toString()} is the key: a {@code String}, {@code UUID}, number or any value object with a stable
 * {@code toString()}. 1 to 255 characters. Exactly one parameter per method may carry it; the other
 * parameters make up the request's fingerprint.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface IdempotencyKey {
}
