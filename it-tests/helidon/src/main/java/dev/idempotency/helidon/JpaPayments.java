package dev.idempotency.helidon;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Payments written through the application's JPA unit (Helidon's container-managed entity manager) inside the method's
 * {@code @Transactional}. What the unit saw of the key's claim in its own transaction is kept per key for the tests.
 */
@ApplicationScoped
public class JpaPayments {

    @PersistenceContext(unitName = "payments")
    EntityManager em;

    @Inject
    Ledger ledger;

    private final Map<String, Integer> claimsSeen = new ConcurrentHashMap<>();
    private final Map<String, Boolean> failOnce = new ConcurrentHashMap<>();

    @Transactional
    @Idempotent(namespace = "jpa-atomic", claim = ClaimMode.ATOMIC)
    public Receipt atomic(@IdempotencyKey String key, long amount) {
        return pay(key, amount);
    }

    @Transactional
    @Idempotent(namespace = "jpa-optimistic", claim = ClaimMode.OPTIMISTIC)
    public Receipt optimistic(@IdempotencyKey String key, long amount) {
        return pay(key, amount);
    }

    /** Cancels a failure asked for and not yet met (the key's calls were answered without running). */
    public void cancelFailure(String key) {
        failOnce.remove(key);
    }

    /** The next call of this key fails after writing its payment. */
    public void failNext(String key) {
        failOnce.put(key, Boolean.TRUE);
    }

    /** The key's claim records that the unit's entity manager saw in the call's transaction. */
    public Integer claimsSeen(String key) {
        return claimsSeen.get(key);
    }

    private Receipt pay(String key, long amount) {
        int run = ledger.countRun(key);
        Payment p = new Payment();
        p.id = UUID.randomUUID().toString();
        p.key = key;
        p.amount = amount;
        em.persist(p);
        em.flush();
        Number seen = (Number) em.createNativeQuery("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?1")
                .setParameter(1, key).getSingleResult();
        claimsSeen.put(key, seen.intValue());
        ledger.pauseIfHeld(key);
        if (failOnce.remove(key) != null) {
            throw new Charges.CardDeclined("declined after the payment of " + key + " was written");
        }
        return new Receipt(p.id, key, amount, run);
    }
}
