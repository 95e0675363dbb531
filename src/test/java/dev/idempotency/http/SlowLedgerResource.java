package dev.idempotency.http;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.UUID;

/**
 * A slow business write: one row on the store's data source, its connection held for {@code millis} inside the
 * transaction (as a JPA provider holds its connection from its first write to the commit).
 */
@Path("/slow-ledger")
@RequestScoped
public class SlowLedgerResource {

    @Inject
    @ForIdempotency
    DataSource dataSource;

    @POST
    @Idempotent
    @Produces(MediaType.APPLICATION_JSON)
    public Response post(@jakarta.ws.rs.QueryParam("millis") long millis) throws Exception {
        Counters.executions.incrementAndGet();
        String id = UUID.randomUUID().toString();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("insert into test_payment (id, amount) values (?, 100)")) {
            ps.setString(1, id);
            ps.executeUpdate();
            Thread.sleep(millis);
        }
        return Response.status(201).entity(Map.of("id", id)).build();
    }
}
