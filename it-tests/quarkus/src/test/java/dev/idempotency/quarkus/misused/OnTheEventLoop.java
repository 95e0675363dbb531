package dev.idempotency.quarkus.misused;

import dev.idempotency.Idempotent;

import io.quarkus.arc.properties.IfBuildProperty;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** An {@code @Idempotent} resource that Quarkus REST runs on its event loop: its application must not start. */
@IfBuildProperty(name = "misused", stringValue = "event-loop")
@Path("/on-the-event-loop")
public class OnTheEventLoop {

    @POST
    @Idempotent
    public CompletionStage<String> pay(String body) {
        return CompletableFuture.completedFuture(body);
    }
}
