package dev.idempotency.core;

import dev.idempotency.IdempotencyKeyClaimedInTransactionException;
import dev.idempotency.spi.ScopedKey;

import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The keys claimed in the caller's active transaction: a second claim of one of them inside that transaction fails at
 * once, instead of waiting on the transaction's own row lock until a lock timeout.
 */
final class TransactionKeys {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());

    private final TransactionBridge transactions;

    TransactionKeys(TransactionBridge transactions) {
        this.transactions = transactions;
    }

    /** Throws when the caller's active transaction claimed this key already. */
    void checkNotClaimed(ScopedKey key) {
        Set<String> claims = transactions.claimsOfThisTransaction(false);
        if (claims != null && claims.contains(key.cacheId())) {
            LOG.log(Level.FINE, "Rejected {0}: already claimed in this transaction", key);
            throw new IdempotencyKeyClaimedInTransactionException("The " + key + " was already claimed in this transaction,"
                    + " by a call whose outcome it has not committed: one transaction cannot run the same idempotent"
                    + " operation twice; call it once per transaction, or give each call its own key");
        }
    }

    /** Notes a claim in the caller's active transaction (none: nothing to note). */
    void remember(ScopedKey key) {
        Set<String> claims = transactions.claimsOfThisTransaction(true);
        if (claims != null) {
            claims.add(key.cacheId());
        }
    }

    /** The key is free again inside the caller's transaction (its claim released or undone there). */
    void forget(ScopedKey key) {
        Set<String> claims = transactions.claimsOfThisTransaction(false);
        if (claims != null) {
            claims.remove(key.cacheId());
        }
    }
}
