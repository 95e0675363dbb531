package dev.idempotency.example;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The interceptor door: the transfer id is the key. The completion is written inside this transaction, so
 * the transfer row and the "done" mark commit together.
 */
@ApplicationScoped
public class TransferService {

    private final AtomicLong transfers = new AtomicLong();

    @PersistenceContext
    EntityManager em;

    @Transactional
    @Idempotent
    public TransferView transfer(@IdempotencyKey String transferId, long amount, String from, String to) {
        transfers.incrementAndGet();
        em.persist(new Transfer(transferId, amount, from, to));
        return new TransferView(transferId, amount, from, to);
    }

    /** Times the transfer code ran on this node. */
    public long transfers() {
        return transfers.get();
    }
}
