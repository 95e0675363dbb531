package dev.idempotency.example;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** {@code POST /api/transfers}: no header; the key is the transfer id, inside the service's {@link TransferCommand}. */
@Path("/transfers")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class TransfersResource {

    @Inject
    TransferService transfers;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response transfer(TransferRequest r) {
        if (r == null || r.transferId == null || r.transferId.isBlank() || r.transferId.length() > 100) {
            return Problems.invalid("transferId is required (1 to 100 characters)");
        }
        if (r.amount == null || r.amount <= 0) {
            return Problems.invalid("amount must be a positive integer, in minor units");
        }
        if (r.from == null || r.from.isBlank() || r.to == null || r.to.isBlank()) {
            return Problems.invalid("from and to are required");
        }
        return Response.ok(transfers.transfer(new TransferCommand(r.transferId, r.amount, r.from, r.to))).build();
    }
}
