package dev.idempotency.helidon;

import dev.idempotency.Idempotent;

import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * The HTTP door. The atomic resource runs in the claim's transaction, begun by the library's request filter and ended
 * after the response is written.
 */
@Path("/payments")
@jakarta.enterprise.context.RequestScoped
public class PaymentsResource {

    /** The request body. */
    public record PaymentRequest(String reference, long amount, boolean fail) {
    }

    /** A pause after the charge, before the commit (the crash test's); a header, so that it is not part of the request. */
    @HeaderParam("X-Pause-After-Charge")
    @jakarta.ws.rs.DefaultValue("0")
    long pauseAfterChargeMillis;

    @Inject
    Ledger ledger;

    @Inject
    TransactionSynchronizationRegistry transactions;

    @POST
    @Idempotent(namespace = "http-atomic")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Transactional
    public Response pay(PaymentRequest request) {
        Receipt receipt = charge(request);
        if (request.fail()) {
            return Response.status(502).entity(receipt).build(); // not kept: the transaction rolls back, the row too
        }
        // what this transaction sees: the claim's record of the reference's key, written in it
        return Response.status(201).header("X-Claim-Records", ledger.records(request.reference()))
                .header("X-In-Transaction", transactions.getTransactionKey() != null).entity(receipt).build();
    }

    @POST
    @Path("/leased")
    @Idempotent(namespace = "http-leased", claim = dev.idempotency.ClaimMode.LEASED)
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response payLeased(PaymentRequest request, @HeaderParam("Idempotency-Key") String key) {
        return Response.status(201).entity(ledger.charge(request.reference(), request.amount())).build();
    }

    /** Leased, with the charge in the resource's own transaction: committed with the answer, or not at all. */
    @POST
    @Path("/leased-transactional")
    @Idempotent(namespace = "http-leased-transactional", claim = dev.idempotency.ClaimMode.LEASED, lease = "PT3S")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Transactional
    public Response payLeasedInATransaction(PaymentRequest request) {
        return Response.status(201).entity(charge(request)).build();
    }

    /**
     * The charge's row, written in the request's transaction; then, when the request's {@code X-Pause-After-Charge}
     * asks for it, a line on standard output and a pause before the commit (the crash test kills the JVM there).
     */
    private Receipt charge(PaymentRequest request) {
        Receipt receipt = ledger.charge(request.reference(), request.amount());
        if (pauseAfterChargeMillis > 0) {
            System.out.println("CHARGED " + request.reference());
            System.out.flush();
            try {
                Thread.sleep(pauseAfterChargeMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return receipt;
    }
}
