package dev.idempotency.example;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

import java.net.URI;

/**
 * {@code /api/payments}: create one (idempotent, {@code Idempotency-Key} required), read one, stats; and
 * {@code /api/payments/optimistic}, the same create with the optimistic claim; {@code /api/payments/by-hand}, the same
 * guarantee written by hand without the library; {@code /api/payments/unprotected}, the same create without the
 * protection: the last three for the benchmarks.
 */
@Path("/payments")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class PaymentsResource {

    @Inject
    PaymentService payments;

    @Inject
    TransferService transfers;

    @Context
    SecurityContext security;

    /**
     * {@value #PAUSE_AFTER_CHARGE}: n ms (0 to 60000) to pause after the payment row is written, before the
     * commit; the crash test kills the server there. A header, not a body field: the fingerprint covers the
     * body, and the retry after the crash must be the same request without the pause.
     */
    static final String PAUSE_AFTER_CHARGE = "X-Pause-After-Charge";

    @Context
    HttpHeaders headers;

    @POST
    @Idempotent
    @Consumes(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "201", description = "The payment, charged; Location names it")
    public Response create(PaymentRequest request, @Context UriInfo uri) {
        return charge(request);
    }

    /**
     * The same operation as {@link #create} with the optimistic claim: nothing is written before the charge; the stored
     * answer is inserted in the payment's transaction, one write per first request (see the claim modes in the guide).
     */
    @POST
    @Path("optimistic")
    @Idempotent(claim = ClaimMode.OPTIMISTIC)
    @Consumes(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "201", description = "The payment, charged; Location names it")
    public Response createOptimistic(PaymentRequest request, @Context UriInfo uri) {
        return charge(request);
    }

    @Inject
    ByHandPayments byHand;

    /**
     * The same guarantee as {@link #create} written by hand in the application ({@link ByHandPayments}), without the
     * library: the twin the benchmarks compare the library with. {@code Idempotency-Key} required; a replay is marked
     * {@code Idempotent-Replayed}; another request with the key is 422; a concurrent duplicate 409.
     */
    @POST
    @Path("by-hand")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response createByHand(PaymentRequest request, @HeaderParam("Idempotency-Key") String key) {
        if (key == null || key.isBlank() || key.length() > 255) {
            return Problems.invalid("An Idempotency-Key header of 1 to 255 characters is required");
        }
        Response invalid = validate(request);
        if (invalid != null) {
            return invalid;
        }
        String owner = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        ByHandPayments.Answer answer;
        try {
            answer = byHand.create(owner, key, request);
        } catch (jakarta.persistence.PersistenceException | jakarta.transaction.TransactionalException e) {
            return Response.status(409).type("application/problem+json").header("Retry-After", "1")
                    .entity("{\"title\":\"A request with this key is in progress\",\"status\":409}").build();
        }
        if (answer.reused()) {
            return Response.status(422).type("application/problem+json")
                    .entity("{\"title\":\"This key was used for another request\",\"status\":422}").build();
        }
        Response.ResponseBuilder created = Response.created(URI.create(answer.location())).type(MediaType.APPLICATION_JSON)
                .entity(answer.body());
        return answer.replayed() ? created.header("Idempotent-Replayed", "true").build() : created.build();
    }

    /**
     * The same operation as {@link #create} without {@code @Idempotent} (an {@code Idempotency-Key} header is
     * ignored): the unprotected twin the HTTP load driver compares against, see BENCHMARKS.md.
     */
    @POST
    @Path("unprotected")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response createUnprotected(PaymentRequest request, @Context UriInfo uri) {
        return charge(request);
    }

    /** Validates the request, charges as the caller, answers 201 with the payment. */
    private Response charge(PaymentRequest request) {
        Response invalid = validate(request);
        if (invalid != null) {
            return invalid;
        }
        long pauseAfterCharge = pauseAfterCharge(headers.getHeaderString(PAUSE_AFTER_CHARGE));
        if (pauseAfterCharge < 0) {
            return Problems.invalid(PAUSE_AFTER_CHARGE + " must be between 0 and 60000");
        }
        String owner = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        Payment p = payments.charge(request.amount, request.currency, request.reference, owner,
                request.delayMillis == null ? 0 : request.delayMillis, pauseAfterCharge, Boolean.TRUE.equals(request.fail));
        return Response.created(URI.create("/api/payments/" + p.getId())).entity(PaymentView.of(p)).build();
    }

    @GET
    @Path("{id}")
    @APIResponse(responseCode = "200", description = "The payment")
    public Response get(@PathParam("id") String id) {
        Payment p = payments.find(id);
        return p == null ? Problems.notFound("No payment " + id) : Response.ok(PaymentView.of(p)).build();
    }

    @GET
    @Path("stats")
    public Stats stats() {
        return new Stats(payments.charges(), payments.flushed(), payments.payments(), transfers.transfers());
    }

    static Response validate(PaymentRequest r) {
        if (r == null) {
            return Problems.invalid("A JSON body {\"amount\": n, \"currency\": \"EUR\", \"reference\": \"...\"} is required");
        }
        if (r.amount == null || r.amount <= 0) {
            return Problems.invalid("amount must be a positive integer, in minor units");
        }
        if (r.currency == null || !r.currency.matches("[A-Z]{3}")) {
            return Problems.invalid("currency must be an ISO 4217 code such as EUR");
        }
        if (r.reference != null && r.reference.length() > 200) {
            return Problems.invalid("reference must be at most 200 characters");
        }
        if (r.delayMillis != null && (r.delayMillis < 0 || r.delayMillis > 60_000)) {
            return Problems.invalid("delayMillis must be between 0 and 60000");
        }
        return null;
    }

    /** The {@value #PAUSE_AFTER_CHARGE} header's milliseconds: 0 when absent, negative when not in 0..60000. */
    static long pauseAfterCharge(String header) {
        if (header == null || header.isBlank()) {
            return 0;
        }
        try {
            long millis = Long.parseLong(header.strip());
            return millis <= 60_000 ? millis : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
