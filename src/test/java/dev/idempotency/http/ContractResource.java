package dev.idempotency.http;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyManager;
import dev.idempotency.Idempotent;
import dev.idempotency.OnConcurrent;
import dev.idempotency.core.IdempotencyEngine;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.function.Function;

/**
 * The resource the first-answer contract's generated schedules call through the HTTP filter
 * ({@code dev.idempotency.contract}): one method per claim mode and duplicate policy, each answering what the schedule's
 * call, named by its {@code X-Call} header, answers; and the node's cache flush and lease heartbeats, for the schedule's
 * steps and invariants. Registered only by {@link ContractServer}.
 */
@Path("/contract")
@RequestScoped
public class ContractResource {

    /** What each call answers, by its {@code X-Call} header: the schedule's. */
    static volatile Function<String, Response> calls;

    @Inject
    IdempotencyManager manager;

    @Inject
    IdempotencyEngine engine;

    @POST
    @Path("atomic-reject")
    @Idempotent(namespace = "payments", claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.REJECT, ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response atomicReject(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("atomic-wait")
    @Idempotent(namespace = "payments", claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S", ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response atomicWait(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("optimistic-reject")
    @Idempotent(namespace = "payments", claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.REJECT, ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response optimisticReject(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("optimistic-wait")
    @Idempotent(namespace = "payments", claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S", ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response optimisticWait(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("leased-reject")
    @Idempotent(namespace = "payments", claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.REJECT, ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response leasedReject(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("leased-wait")
    @Idempotent(namespace = "payments", claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S", ttl = "PT1H", lease = "PT30S")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    public Response leasedWait(String request, @HeaderParam("X-Call") String call) {
        return calls.apply(call);
    }

    @POST
    @Path("flush")
    public void flush() {
        manager.flushCache();
    }

    @GET
    @Path("heartbeats")
    @Produces(MediaType.TEXT_PLAIN)
    public String heartbeats() {
        return String.valueOf(engine.heartbeats());
    }
}
