package dev.idempotency;

import jakarta.inject.Qualifier;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Qualifies the beans an application supplies to the library: an {@code EntityManagerFactory} or a
 * {@code DataSource} for the JPA store, a {@code java.time.Clock}. A bean so qualified wins over the
 * library's default.
 */
@Qualifier
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.FIELD, ElementType.PARAMETER})
public @interface ForIdempotency {

    /** The literal, for programmatic lookups. */
    final class Literal extends jakarta.enterprise.util.AnnotationLiteral<ForIdempotency> implements ForIdempotency {
        private static final long serialVersionUID = 1L;
        /** The one instance. */
        public static final Literal INSTANCE = new Literal();
    }
}
