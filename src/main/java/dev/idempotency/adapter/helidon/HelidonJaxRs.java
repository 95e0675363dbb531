package dev.idempotency.adapter.helidon;

import dev.idempotency.jaxrs.IdempotencyFeature;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.BeforeBeanDiscovery;
import jakarta.enterprise.inject.spi.Extension;

/**
 * Helidon MP's Jersey takes its providers from the CDI container's beans only, not from the jar's
 * {@code META-INF/services}: where Helidon's JAX-RS extension runs, the filter's feature is made a bean. Elsewhere this
 * extension does nothing.
 */
public class HelidonJaxRs implements Extension {

    /** Helidon MP's JAX-RS extension. */
    static final String HELIDON_JAX_RS = "io.helidon.microprofile.server.JaxRsCdiExtension";

    void addFeature(@Observes BeforeBeanDiscovery bbd) {
        try {
            Class.forName(HELIDON_JAX_RS, false, HelidonJaxRs.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return;
        }
        bbd.addAnnotatedType(IdempotencyFeature.class, IdempotencyFeature.class.getName());
    }
}
