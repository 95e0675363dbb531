package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The interceptor door: the key is inside the command, its transfer id ({@link TransferCommand}). The completion is written inside this transaction, so
 * the transfer row and the "done" mark commit together.
 */
@ApplicationScoped
public class TransferService {

    private final AtomicLong transfers = new AtomicLong();

    @PersistenceContext
    EntityManager em;

    @Transactional
    @Idempotent
    public TransferView transfer(TransferCommand command) {
        transfers.incrementAndGet();
        em.persist(new Transfer(command.transferId(), command.amount(), command.from(), command.to()));
        return new TransferView(command.transferId(), command.amount(), command.from(), command.to());
    }

    /** Times the transfer code ran on this node. */
    public long transfers() {
        return transfers.get();
    }
}
