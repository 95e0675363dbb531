package dev.idempotency.http;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** {@code @Idempotent} on the class: every resource method, whatever its HTTP method. */
@Path("/items")
@RequestScoped
@Idempotent
public class ItemsResource {

    @PUT
    @Path("{id}")
    @Produces(MediaType.TEXT_PLAIN)
    public String put(@PathParam("id") String id, String body) {
        return "put " + id + " #" + Counters.executions.incrementAndGet();
    }

    @DELETE
    @Path("{id}")
    @Produces(MediaType.TEXT_PLAIN)
    public String delete(@PathParam("id") String id) {
        return "deleted " + id + " #" + Counters.executions.incrementAndGet();
    }
}
