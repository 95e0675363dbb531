package dev.idempotency.http;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** Request bodies over a method's cap (HttpRequestSizeTest). Each answers how often anything ran and what it read. */
@Path("/sized")
@RequestScoped
@Consumes(MediaType.WILDCARD)
@Produces(MediaType.TEXT_PLAIN)
public class SizedResource {

    private static String ran(byte[] body) {
        return "run " + Counters.executions.incrementAndGet() + ", read " + body.length;
    }

    @POST
    @Idempotent(maxRequestSize = 1024)
    public String capped(byte[] body) {
        return ran(body);
    }

    /** idempotency.max-request-size (the test sets it). */
    @POST
    @Path("global")
    @Idempotent
    public String global(byte[] body) {
        return ran(body);
    }

    /** Its annotation's cap, overridden to 100 by the test's configuration. */
    @POST
    @Path("overridden")
    @Idempotent(maxRequestSize = 1024)
    public String overridden(byte[] body) {
        return ran(body);
    }

    @POST
    @Path("body-key")
    @Idempotent(keyFrom = "/id", maxRequestSize = 1024)
    public String bodyKey(byte[] body) {
        return ran(body);
    }

    /** Not idempotent: the library reads nothing, and sets no cap. */
    @POST
    @Path("plain")
    public String plain(byte[] body) {
        return ran(body);
    }
}
