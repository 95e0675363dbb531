package dev.idempotency.http;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Resources that answer later, on another thread (leased claims, said here since the tests' other servers run with
 * another default and every test server's container sees this class): one suspends its response and resumes it from an
 * executor of its own (once as it comes, once before the method returns), one returns a {@code CompletionStage}
 * completed there. The response filter and the writer then
 * run on that thread, where the request's context is not active.
 */
@Path("/async")
@RequestScoped
@Produces(MediaType.TEXT_PLAIN)
public class AsyncResource {

    static final ExecutorService WORKERS = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "async-resource");
        t.setDaemon(true);
        return t;
    });

    @POST
    @Path("suspended")
    @Idempotent(claim = ClaimMode.LEASED)
    public void suspended(@Suspended AsyncResponse response) {
        WORKERS.execute(() -> response.resume(Response.status(201).entity("run " + Counters.executions.incrementAndGet()).build()));
    }

    /**
     * Resumed on the executor, and the answer processed there (the response filters and the writer run within
     * {@code resume}), before this method returns: what a busy machine does to the resource above at random.
     */
    @POST
    @Path("suspended-answered-before-return")
    @Idempotent(claim = ClaimMode.LEASED)
    public void answeredBeforeReturn(@Suspended AsyncResponse response) throws Exception {
        WORKERS.submit(() -> response.resume(Response.status(201).entity("run " + Counters.executions.incrementAndGet()).build()))
                .get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    @POST
    @Path("stage")
    @Idempotent(claim = ClaimMode.LEASED)
    public CompletionStage<String> stage() {
        return CompletableFuture.supplyAsync(() -> "run " + Counters.executions.incrementAndGet(), WORKERS);
    }
}
