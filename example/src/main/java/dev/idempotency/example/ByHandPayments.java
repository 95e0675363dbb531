package dev.idempotency.example;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The same guarantee as {@code @Idempotent}, written by hand in the application as a careful developer would, for the
 * benchmarks to compare the library with: a table keyed by (owner, key); in the payment's own transaction, a stored
 * answer is replayed, or the card is charged and the answer stored beside the payment; a concurrent duplicate's insert
 * meets the first one's row and its transaction, its payment with it, rolls back.
 */
@ApplicationScoped
public class ByHandPayments {

    private static final Jsonb JSON = JsonbBuilder.create();

    @PersistenceContext
    EntityManager em;

    @Inject
    PaymentService payments;

    /** What the request gets: the answer, and whether it was stored before (a replay) or is another request's. */
    public record Answer(String location, String body, boolean replayed, boolean reused) {
    }

    /** @throws jakarta.persistence.PersistenceException a concurrent duplicate stored its answer first (rolled back) */
    @Transactional
    public Answer create(String owner, String key, PaymentRequest r) {
        String id = owner + " " + key;
        String fingerprint = fingerprint(r);
        ByHandKey stored = em.find(ByHandKey.class, id);
        if (stored != null) {
            return stored.fingerprint().equals(fingerprint) ? new Answer(stored.location(), stored.body(), true, false)
                    : new Answer(null, null, false, true);
        }
        Payment p = payments.charge(r.amount, r.currency, r.reference, owner, r.delayMillis == null ? 0 : r.delayMillis, 0,
                Boolean.TRUE.equals(r.fail));
        String location = "/api/payments/" + p.getId();
        String body = JSON.toJson(PaymentView.of(p));
        em.persist(new ByHandKey(id, fingerprint, location, body));
        em.flush(); // a duplicate that got here first: its row is found now, and this transaction rolls back
        return new Answer(location, body, false, false);
    }

    private static String fingerprint(PaymentRequest r) {
        String canonical = r.amount + "|" + r.currency + "|" + r.reference + "|" + r.delayMillis + "|" + r.fail;
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
