package dev.idempotency.example;

import dev.idempotency.IdempotencyManager;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

/**
 * {@code POST /api/ops/cache/flush}: empties the idempotency cache on every node of the cluster
 * ({@link IdempotencyManager#flushCache()}); the store keeps answering every key. An operator's and a test's
 * aid (the chaos test flushes the cache mid-run); it deletes nothing. Only the operator (ops / ops-pw) may call it:
 * anyone else is {@code 401} (no credentials) or {@code 403}, since a flush costs every node its cache.
 */
@Path("/ops")
@RequestScoped
public class OpsResource {

    @Inject
    IdempotencyManager idempotency;

    @Context
    SecurityContext security;

    @POST
    @Path("cache/flush")
    public Response flushCache() {
        if (security.getUserPrincipal() == null) {
            return Response.status(401).header("WWW-Authenticate", "Basic realm=\"payments\"")
                    .type(Problems.MEDIA_TYPE).entity(Problems.forStatus(401)).build();
        }
        if (!security.isUserInRole("operator")) {
            return Response.status(403).type(Problems.MEDIA_TYPE).entity(Problems.forStatus(403)).build();
        }
        idempotency.flushCache();
        return Response.noContent().build();
    }
}
