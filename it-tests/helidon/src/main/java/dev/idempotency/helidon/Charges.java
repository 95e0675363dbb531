package dev.idempotency.helidon;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Charges through the interceptor, one method per claim mode, each inside the method's own {@code @Transactional}; and
 * through the functional API. What the body saw of its transaction is kept per key for the tests.
 */
@ApplicationScoped
public class Charges {

    /** A failure of the charge that rolls its transaction back; the retry runs again. */
    public static class CardDeclined extends RuntimeException {
        public CardDeclined(String message) {
            super(message);
        }
    }

    /** What the business code saw inside its transaction: whether it had one, and the key's claim records in it. */
    public record Inside(boolean transaction, int records) {
    }

    @Inject
    Ledger ledger;

    @Inject
    TransactionSynchronizationRegistry transactions;

    @Inject
    Idempotency idempotency;

    private final Map<String, Inside> inside = new ConcurrentHashMap<>();
    private final Map<String, Boolean> failOnce = new ConcurrentHashMap<>();

    @Transactional
    @Idempotent(namespace = "charges-atomic", claim = ClaimMode.ATOMIC)
    public Receipt atomic(@IdempotencyKey String key, long amount) {
        return charge(key, amount);
    }

    /**
     * A method whose transaction is always its own: the claim is in it only if the interceptor runs inside
     * {@code @Transactional} (its priority); outside, the library's transaction would hold the claim, and this one the
     * charge.
     */
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    @Idempotent(namespace = "charges-own-transaction", claim = ClaimMode.ATOMIC)
    public Receipt atomicInItsOwnTransaction(@IdempotencyKey String key, long amount) {
        return charge(key, amount);
    }

    @Transactional
    @Idempotent(namespace = "charges-optimistic", claim = ClaimMode.OPTIMISTIC)
    public Receipt optimistic(@IdempotencyKey String key, long amount) {
        return charge(key, amount);
    }

    @Transactional
    @Idempotent(namespace = "charges-leased", claim = ClaimMode.LEASED)
    public Receipt leased(@IdempotencyKey String key, long amount) {
        return charge(key, amount);
    }

    /** The functional API, inside this bean's transaction (an atomic claim by default). */
    @Transactional
    public Receipt functional(String key, long amount) throws Exception {
        return idempotency.call("charges-functional", key, amount, Receipt.class, () -> charge(key, amount));
    }

    /** Cancels a failure asked for and not yet met (the key's calls were answered without running). */
    public void cancelFailure(String key) {
        failOnce.remove(key);
    }

    /** The next call of this key fails after writing its row. */
    public void failNext(String key) {
        failOnce.put(key, Boolean.TRUE);
    }

    public Inside inside(String key) {
        return inside.get(key);
    }

    private Receipt charge(String key, long amount) {
        Receipt receipt = ledger.charge(key, amount);
        inside.put(key, new Inside(transactions.getTransactionKey() != null, ledger.records(key)));
        if (failOnce.remove(key) != null) {
            throw new CardDeclined("declined after the charge of " + key + " was written");
        }
        return receipt;
    }
}
