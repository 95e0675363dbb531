package dev.idempotency.example;

import jakarta.enterprise.context.RequestScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/** In-server test endpoint: breaks the library's store (its table goes), as a failed database would. */
@Path("/it/ops")
@RequestScoped
public class ItOps {

    @PersistenceContext
    EntityManager em;

    @POST
    @Path("break-store")
    @Transactional
    public String breakStore() {
        em.createNativeQuery("DROP TABLE idempotency_record").executeUpdate();
        return "broken";
    }
}
