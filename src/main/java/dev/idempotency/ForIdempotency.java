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
 * library's default. On Helidon MP, where data sources are plain pools, the library itself offers a {@code DataSource} so
 * qualified (when the application has none): the records' pool, one connection per JTA transaction, the one the claims
 * are written on, for the application's JDBC writes that must commit with them.
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
