package dev.idempotency.quarkus.misused;

import dev.idempotency.Idempotent;

import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.common.annotation.NonBlocking;

import jakarta.transaction.Transactional;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/**
 * A resource class that Quarkus REST runs on its event loop ({@code @NonBlocking} wins over the method's
 * {@code @Transactional}): its {@code @Idempotent} method must not start.
 */
@IfBuildProperty(name = "misused", stringValue = "non-blocking-class")
@NonBlocking
@Path("/non-blocking")
public class NonBlockingClass {

    @POST
    @Transactional
    @Idempotent
    public String pay(String body) {
        return body;
    }
}
