package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A resource method the JAX-RS filter does not guard is refused by the interceptor, not run unprotected. */
@EnableWeld
class UnguardedResourceTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), Payments.class);

    @Inject
    Payments payments;

    @Path("/payments")
    @ApplicationScoped
    public static class Payments {
        @POST
        @Idempotent
        public String create(String body) {
            return "created";
        }
    }

    @Test
    void calledOutsideTheFilterItFailsLoudly() {
        assertThatThrownBy(() -> payments.create("{}"))
                .isInstanceOf(IdempotencyConfigurationException.class)
                .hasMessageContaining("without the Idempotency-Key filter");
    }
}
