package dev.idempotency.http;

import dev.idempotency.Idempotent;
import dev.idempotency.OnConcurrent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

import java.io.InputStream;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Resources for the HTTP tests. A CDI bean with {@code @Idempotent}: the interceptor is bound too, and the
 * key is still claimed once.
 */
@Path("/payments")
@RequestScoped
public class PaymentsResource {

    public record Payment(String id, long amount, String currency, String owner) {
    }

    public record PaymentRequest(long amount, String currency) {
    }

    @Context
    SecurityContext security;

    private Response created(PaymentRequest request, UriInfo uri) {
        Counters.executions.incrementAndGet();
        String owner = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        Payment p = new Payment(UUID.randomUUID().toString(), request.amount(), request.currency(), owner);
        return Response.created(uri.getAbsolutePathBuilder().path(p.id()).build())
                .entity(p)
                .tag(new EntityTag(p.id()))
                .cookie(new NewCookie.Builder("session").value(UUID.randomUUID().toString()).build())
                .header("X-Trace", UUID.randomUUID().toString())
                .build();
    }

    @POST
    @Idempotent
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response create(PaymentRequest request, @Context UriInfo uri) {
        return created(request, uri);
    }

    @POST
    @Path("slow")
    @Idempotent
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response slow(PaymentRequest request, @Context UriInfo uri) throws InterruptedException {
        Counters.slow.await(60, TimeUnit.SECONDS);
        return created(request, uri);
    }

    @POST
    @Path("slow-wait")
    @Idempotent(onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT60S")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response slowWait(PaymentRequest request, @Context UriInfo uri) throws InterruptedException {
        Counters.arrivals.incrementAndGet();
        Counters.slow.await(60, TimeUnit.SECONDS);
        return created(request, uri);
    }

    /** An entity that JSON-B cannot write (its getter throws): the writer fails after the resource ran. */
    public static class Unwritable {
        public String getReceipt() {
            throw new IllegalStateException("the receipt cannot be written");
        }
    }

    @POST
    @Path("unwritable")
    @Idempotent
    @Produces(MediaType.APPLICATION_JSON)
    public Response unwritable() {
        Counters.executions.incrementAndGet();
        return Response.status(201).entity(new Unwritable()).build();
    }

    /** Answers with the status asked for, or throws. */
    @POST
    @Path("outcome")
    @Idempotent
    @Produces(MediaType.APPLICATION_JSON)
    public Response outcome(@QueryParam("status") int status, @QueryParam("throw") boolean fail) {
        int n = Counters.executions.incrementAndGet();
        if (fail) {
            throw new IllegalStateException("the charge failed after it started");
        }
        return Response.status(status).entity("{\"attempt\":" + n + "}").build();
    }

    @POST
    @Path("optional")
    @Idempotent(required = false)
    @Produces(MediaType.TEXT_PLAIN)
    public String optional() {
        return "run " + Counters.executions.incrementAndGet();
    }

    @POST
    @Path("fail-open")
    @Idempotent(failOpen = true)
    @Produces(MediaType.TEXT_PLAIN)
    public String failOpen() {
        return "run " + Counters.executions.incrementAndGet();
    }

    @POST
    @Path("custom-header")
    @Idempotent(header = "X-Request-Id")
    @Produces(MediaType.TEXT_PLAIN)
    public String customHeader() {
        return "run " + Counters.executions.incrementAndGet();
    }

    @GET
    @Path("large")
    @Idempotent(maxResponseSize = 1024)
    @Produces(MediaType.TEXT_PLAIN)
    public Response large(@QueryParam("size") int size) {
        Counters.executions.incrementAndGet();
        return Response.ok("x".repeat(size)).location(java.net.URI.create("/payments/large-result")).build();
    }

    /** A replayable header too large for the stored form (a Link of {@code size} characters). */
    @GET
    @Path("huge-header")
    @Idempotent
    @Produces(MediaType.TEXT_PLAIN)
    public Response hugeHeader(@QueryParam("size") int size) {
        Counters.executions.incrementAndGet();
        return Response.ok("ok").header("Link", "<https://example.org/" + "x".repeat(size) + ">").build();
    }

    /** What the resource method gets as its entity stream: the filter's buffer. */
    @POST
    @Path("stream")
    @Idempotent
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.TEXT_PLAIN)
    public String stream(InputStream body) throws java.io.IOException {
        Counters.executions.incrementAndGet();
        return body.getClass().getName() + " " + new String(body.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
