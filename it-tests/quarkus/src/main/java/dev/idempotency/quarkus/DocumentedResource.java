package dev.idempotency.quarkus;

import dev.idempotency.Idempotent;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * Operations for the OpenAPI document's test: a required key (with an expiry header, configured for it alone), an
 * optional key, and an unguarded read. Each answers its body back.
 */
@Path("/documented")
public class DocumentedResource {

    @POST
    @Path("required")
    @Idempotent(namespace = "documented-required")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "201", description = "Created")
    public Response required(String body) {
        return Response.status(201).entity(body).build();
    }

    @POST
    @Path("optional")
    @Idempotent(namespace = "documented-optional", required = false)
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "201", description = "Created")
    public Response optional(String body) {
        return Response.status(201).entity(body).build();
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "200", description = "Nothing guarded")
    public String unguarded() {
        return "{}";
    }
}
