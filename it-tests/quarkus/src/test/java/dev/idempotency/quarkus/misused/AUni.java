package dev.idempotency.quarkus.misused;

import dev.idempotency.Idempotent;

import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/** An {@code @Idempotent} resource answering a {@code Uni}, on a worker thread: its application must not start. */
@IfBuildProperty(name = "misused", stringValue = "uni")
@Path("/a-uni")
public class AUni {

    @POST
    @Blocking
    @Idempotent
    public Uni<String> pay(String body) {
        return Uni.createFrom().item(body);
    }
}
