package dev.idempotency.example;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import java.util.concurrent.atomic.AtomicLong;

/** In-server test bean: business transactions that roll back around an {@code @Idempotent} call. */
@ApplicationScoped
public class ItTransfers {

    static final AtomicLong FAILING = new AtomicLong();

    @Inject
    TransferService transfers;

    @Resource
    TransactionSynchronizationRegistry tsr;

    @PersistenceContext
    EntityManager em;

    /** Writes, then fails: the write rolls back and the key is released. */
    @Transactional
    @Idempotent
    public TransferView transferThenFail(@IdempotencyKey String transferId, long amount) {
        FAILING.incrementAndGet();
        em.persist(new Transfer(transferId, amount, "a", "b"));
        em.flush();
        throw new IllegalStateException("the transfer failed after its write");
    }

    /** The idempotent transfer returns, then the surrounding business transaction rolls back. */
    @Transactional
    public TransferView transferThenRollBack(String transferId, long amount) {
        TransferView view = transfers.transfer(new TransferCommand(transferId, amount, "a", "b"));
        tsr.setRollbackOnly();
        return view;
    }
}
