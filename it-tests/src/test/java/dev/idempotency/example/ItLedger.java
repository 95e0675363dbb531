package dev.idempotency.example;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import jakarta.ejb.Stateless;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;

import java.util.concurrent.atomic.AtomicLong;

/** In-server test bean: {@code @Idempotent} on a stateless EJB (container-managed transaction). */
@Stateless
public class ItLedger {

    static final AtomicLong EXECUTIONS = new AtomicLong();

    @PersistenceContext
    EntityManager em;

    @Idempotent
    public TransferView record(@IdempotencyKey String entryId, long amount) {
        EXECUTIONS.incrementAndGet();
        em.persist(new Transfer(entryId, amount, "ledger", "ledger"));
        return new TransferView(entryId, amount, "ledger", "ledger");
    }
}
