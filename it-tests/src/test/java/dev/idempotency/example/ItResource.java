package dev.idempotency.example;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.List;

/** In-server test endpoints around the extra beans. */
@Path("/it")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class ItResource {

    @Inject
    ItLedger ledger;

    @Inject
    ItTransfers transfers;

    @Inject
    ItConfigured configured;

    @PersistenceContext
    EntityManager em;

    public record Counts(long ledgerExecutions, long failingExecutions, long transferRows, long completedRecords) {
    }

    @POST
    @Path("ledger/{id}")
    public TransferView ledger(@PathParam("id") String id) {
        return ledger.record(id, 10);
    }

    @POST
    @Path("transfers/{id}/fail")
    public Response fail(@PathParam("id") String id) {
        try {
            transfers.transferThenFail(id, 10);
            return Response.ok().build();
        } catch (RuntimeException e) {
            return Response.status(500).entity("{\"failed\":true}").build();
        }
    }

    @POST
    @Path("transfers/{id}/rollback")
    public TransferView rollback(@PathParam("id") String id) {
        return transfers.transferThenRollBack(id, 10);
    }

    @POST
    @Path("configured/off/{key}")
    public long switchedOff(@PathParam("key") String key) {
        return configured.switchedOff(key);
    }

    @POST
    @Path("configured/ttl/{key}")
    public long configuredTtl(@PathParam("key") String key) {
        return configured.configuredTtl(key);
    }

    /** The stored record's time to live, in milliseconds, read from the library's table. */
    @GET
    @Path("ttl/{key}")
    public long ttl(@PathParam("key") String key) {
        List<?> rows = em.createNativeQuery("select expires_at - first_seen from idempotency_record where idem_key = ?1")
                .setParameter(1, key).getResultList();
        return rows.isEmpty() ? -1 : ((Number) rows.get(0)).longValue();
    }

    @GET
    @Path("counts")
    public Counts counts() {
        long transferRows = em.createQuery("select count(t) from Transfer t", Long.class).getSingleResult();
        long completed = ((Number) em.createNativeQuery("select count(*) from idempotency_record where status = 'COMPLETED'")
                .getSingleResult()).longValue();
        return new Counts(ItLedger.EXECUTIONS.get(), ItTransfers.FAILING.get(), transferRows, completed);
    }
}
