package dev.idempotency.example;

import dev.idempotency.IdempotencyManager;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

/**
 * {@code POST /api/ops/cache/flush}: empties the idempotency cache on every node of the cluster
 * ({@link IdempotencyManager#flushCache()}); the store keeps answering every key. An operator's and a test's
 * aid (the chaos test flushes the cache mid-run); it deletes nothing.
 */
@Path("/ops")
@RequestScoped
public class OpsResource {

    @Inject
    IdempotencyManager idempotency;

    @POST
    @Path("cache/flush")
    public Response flushCache() {
        idempotency.flushCache();
        return Response.noContent().build();
    }
}
