package dev.idempotency.http;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.io.InputStream;

/** Not idempotent: the filter must not touch it. */
@Path("/plain")
@RequestScoped
public class PlainResource {

    @POST
    @Path("stream")
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.TEXT_PLAIN)
    public String stream(InputStream body) throws java.io.IOException {
        Counters.executions.incrementAndGet();
        return body.getClass().getName() + " " + new String(body.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
