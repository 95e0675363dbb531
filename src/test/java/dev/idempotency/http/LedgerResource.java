package dev.idempotency.http;

import dev.idempotency.Idempotent;
import dev.idempotency.ForIdempotency;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;

/**
 * A resource whose business write goes to the store's data source (an Agroal pool enlisting in JTA): with an
 * atomic claim it joins the transaction the request filter began. The entity is a map, written by the JSON-B
 * provider, with a fresh id each time it runs: a replay must carry the first answer's bytes.
 */
@Path("/ledger")
@RequestScoped
public class LedgerResource {

    @Inject
    @ForIdempotency
    DataSource dataSource;

    @Inject
    jakarta.transaction.TransactionSynchronizationRegistry transactions;

    @POST
    @Idempotent
    @Produces(MediaType.APPLICATION_JSON)
    public Response post(@QueryParam("status") int status, @QueryParam("throw") boolean fail,
                         @QueryParam("rollbackOnly") boolean rollbackOnly, @QueryParam("pad") int pad) throws SQLException {
        Counters.executions.incrementAndGet();
        String id = UUID.randomUUID().toString();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, ?)")) {
            ps.setString(1, id);
            ps.setLong(2, 100);
            ps.executeUpdate();
        }
        if (rollbackOnly) {
            // As a bean the resource called would, on a failure it swallowed: the resource still answers its status.
            transactions.setRollbackOnly();
        }
        if (fail) {
            // No exception mapper: the runtime answers 500 without running the response filters.
            throw new IllegalStateException("the ledger failed after its write");
        }
        // pad: a body that many characters longer (over a response cap)
        Map<String, Object> entity = pad == 0 ? Map.of("id", id, "amount", 100, "note", "ümlaut ✓")
                : Map.of("id", id, "amount", 100, "note", "ümlaut ✓", "pad", "x".repeat(pad));
        return Response.status(status == 0 ? 201 : status).entity(entity).build();
    }
}
