package dev.idempotency.example;

import jakarta.enterprise.context.RequestScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** In-server Kafka tests: what the consumers wrote and how often they ran. */
@Path("/it/kafka")
@RequestScoped
@Produces(MediaType.TEXT_PLAIN)
public class KafkaResource {

    @PersistenceContext
    EntityManager em;

    /** The payments of one consumer (owner), one line per key: {@code <key> <rows> <runs>}, ordered by key. */
    @GET
    @Path("{owner}")
    public String rows(@PathParam("owner") String owner) {
        List<Object[]> rows = em.createQuery("select p.reference, count(p) from Payment p where p.owner = :owner"
                + " group by p.reference order by p.reference", Object[].class).setParameter("owner", owner).getResultList();
        StringBuilder out = new StringBuilder();
        for (Object[] row : rows) {
            AtomicLong runs = ConsumerRuns.runs(owner, (String) row[0]);
            out.append(row[0]).append(' ').append(row[1]).append(' ').append(runs.get()).append('\n');
        }
        return out.toString();
    }

    /** How often a key's consumer ran (its rows may have rolled back). */
    @GET
    @Path("{owner}/{key}/runs")
    public long runs(@PathParam("owner") String owner, @PathParam("key") String key) {
        return ConsumerRuns.runs(owner, key).get();
    }
}
