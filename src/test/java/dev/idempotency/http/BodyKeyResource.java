package dev.idempotency.http;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** Keys from a JSON body field, fingerprints of chosen fields. Each answers how often anything ran. */
@Path("/orders")
@RequestScoped
@Consumes(MediaType.WILDCARD)
@Produces(MediaType.TEXT_PLAIN)
public class BodyKeyResource {

    /** The header's key first, else the body's orderId; only amount and currency are the request. */
    @POST
    @Idempotent(keyFrom = "/orderId", fingerprintFields = {"/amount", "/currency"})
    public String place(String body) {
        return "run " + Counters.executions.incrementAndGet();
    }

    /** Only the body's order.id; a header is ignored. */
    @POST
    @Path("body-only")
    @Idempotent(keyFrom = "/order/id", keyFromHeader = false)
    public String bodyOnly(String body) {
        return "run " + Counters.executions.incrementAndGet();
    }

    @POST
    @Path("optional")
    @Idempotent(keyFrom = "/orderId", required = false)
    public String optional(String body) {
        return "run " + Counters.executions.incrementAndGet();
    }
}
