package dev.idempotency.http;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.SecurityContext;

/** Anonymous callers: one resource method per anonymous policy; each answers who ran it and how often anything ran. */
@Path("/anonymous")
@RequestScoped
@Produces(MediaType.TEXT_PLAIN)
public class AnonymousResource {

    @Context
    SecurityContext security;

    private String ran() {
        String who = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        return "run " + Counters.executions.incrementAndGet() + " by " + who;
    }

    @POST
    @Path("allow")
    @Idempotent
    public String allow() {
        return ran();
    }

    @POST
    @Path("reject")
    @Idempotent(anonymous = "reject")
    public String reject() {
        return ran();
    }

    @POST
    @Path("client")
    @Idempotent(anonymous = "header:X-Client-Id")
    public String client() {
        return ran();
    }

    /** {@code allow} here; the test's configuration says {@code reject} for this method (a per-method override). */
    @POST
    @Path("configured")
    @Idempotent(anonymous = "allow")
    public String configured() {
        return ran();
    }
}
