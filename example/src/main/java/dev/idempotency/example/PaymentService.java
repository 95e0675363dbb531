package dev.idempotency.example;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/** Charges a card and records the payment, in one transaction. */
@ApplicationScoped
public class PaymentService {

    private final AtomicLong charges = new AtomicLong();
    private final AtomicLong flushed = new AtomicLong();

    @PersistenceContext
    EntityManager em;

    @Transactional
    public Payment charge(long amount, String currency, String reference, String owner, long delayMillis,
            long pauseAfterChargeMillis, boolean fail) {
        charges.incrementAndGet();
        if (delayMillis > 0) {
            pause(delayMillis); // the demo's slow card network
        }
        Payment payment = new Payment(UUID.randomUUID().toString(), amount, currency, reference, "CHARGED", owner);
        em.persist(payment);
        em.flush();
        // The row is written, in the transaction, not committed; the crash test waits for this count and then
        // kills the server during the pause below (a retry must then charge once, at once).
        flushed.incrementAndGet();
        if (pauseAfterChargeMillis > 0) {
            pause(pauseAfterChargeMillis);
        }
        if (fail) {
            throw new IllegalStateException("The card network failed after the charge started");
        }
        return payment;
    }

    public Payment find(String id) {
        return em.find(Payment.class, id);
    }

    /** Times the charge code ran on this node, failed attempts included. */
    public long charges() {
        return charges.get();
    }

    /** Times the charge code wrote (flushed) its payment row on this node, committed or not. */
    public long flushed() {
        return flushed.get();
    }

    public long payments() {
        return em.createQuery("select count(p) from Payment p", Long.class).getSingleResult();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
