package dev.idempotency.store.jpa;

import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.ClaimRules;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The JPA store: portable JPA only (Hibernate, EclipseLink). The database is the judge of "new":
 *
 * <ul>
 * <li><b>claim</b>, in a transaction of its own: a plain read; no row, so insert (a concurrent insert of
 *     the same key loses on the primary key and retries, now finding the row); a live row, so return it
 *     untouched; an expired, released or lease-expired row, so lock it ({@code PESSIMISTIC_WRITE}), judge
 *     again under the lock, and write the claim (exactly one taker).</li>
 * <li><b>complete</b>: lock the row, check the fence (owner, version, still in progress), write; inside
 *     the caller's JTA transaction when asked and there is one.</li>
 * <li><b>release</b>: lock, check owner and version, free the row (kept, with its attempts, as
 *     {@code IN_PROGRESS} with no owner).</li>
 * </ul>
 */
public final class JpaIdempotencyStore implements IdempotencyStore {

    private static final Logger LOG = Logger.getLogger(JpaIdempotencyStore.class.getName());
    private static final int CLAIM_ATTEMPTS = 3;

    private final JpaTransactions transactions;
    private final Map<String, Object> lockHints;

    /**
     * @param transactions how work is run (resource-local or JTA)
     * @param lockTimeout  how long a pessimistic lock waits (the {@code jakarta.persistence.lock.timeout}
     *                     hint; PostgreSQL ignores it and uses its own {@code lock_timeout})
     */
    public JpaIdempotencyStore(JpaTransactions transactions, Duration lockTimeout) {
        this.transactions = transactions;
        this.lockHints = Map.of("jakarta.persistence.lock.timeout", lockTimeout.toMillis());
    }

    @Override
    public Claim claim(ClaimRequest request) {
        String id = request.scopedKey().id();
        RuntimeException last = null;
        for (int attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
            try {
                return transactions.inNewTransaction(em -> claim(em, id, request));
            } catch (RuntimeException e) {
                // Typically a concurrent insert of the same key won: the next attempt finds its row.
                last = e;
                LOG.log(Level.FINE, "Claim attempt {0} of {1} failed: {2}", new Object[] {attempt, request.scopedKey(), e});
            }
        }
        throw new IdempotencyStoreException("Could not claim the " + request.scopedKey(), last);
    }

    private Claim claim(EntityManager em, String id, ClaimRequest request) {
        IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id);
        if (entity == null) {
            IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
            em.persist(IdempotencyRecordEntity.of(fresh));
            em.flush();
            return new Claim.Acquired(ClaimRules.ticket(fresh, false));
        }
        if (ClaimRules.judge(entity.toRecord(), request) == ClaimRules.Verdict.EXISTING) {
            return new Claim.Existing(entity.toRecord());
        }
        em.refresh(entity, LockModeType.PESSIMISTIC_WRITE, lockHints);
        IdempotencyRecord locked = entity.toRecord();
        ClaimRules.Verdict verdict = ClaimRules.judge(locked, request);
        if (verdict == ClaimRules.Verdict.EXISTING) {
            return new Claim.Existing(locked);
        }
        IdempotencyRecord claimed = ClaimRules.claimed(locked, request, verdict);
        entity.assign(claimed);
        em.flush();
        return new Claim.Acquired(ClaimRules.ticket(claimed, verdict == ClaimRules.Verdict.TAKE_OVER));
    }

    @Override
    public void complete(Ticket ticket, Completion completion) {
        String id = ticket.scopedKey().id();
        Function<EntityManager, Void> work = em -> {
            IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id, LockModeType.PESSIMISTIC_WRITE, lockHints);
            IdempotencyRecord r = entity == null ? null : entity.toRecord();
            if (r == null || !r.isHeldBy(ticket)) {
                throw new IdempotencyLeaseLostException("The claim on the " + ticket.scopedKey()
                        + " was lost (taken over after its lease expired); its completion is refused");
            }
            entity.assign(new IdempotencyRecord(r.scopedKey(), completion.status(), r.fingerprint(),
                    completion.response(), r.requestType(), r.attempts(), r.firstSeen(), completion.now(),
                    completion.now(), r.expiresAt(), null, r.owner(), r.version()));
            return null;
        };
        try {
            if (completion.joinTransaction()) {
                transactions.inCurrentTransaction(work);
            } else {
                transactions.inNewTransaction(work);
            }
        } catch (IdempotencyLeaseLostException e) {
            throw e;
        } catch (RuntimeException e) {
            IdempotencyLeaseLostException lost = findCause(e, IdempotencyLeaseLostException.class);
            if (lost != null) {
                throw lost;
            }
            throw new IdempotencyStoreException("Could not store the outcome of the " + ticket.scopedKey(), e);
        }
    }

    @Override
    public boolean release(Ticket ticket, Instant now) {
        String id = ticket.scopedKey().id();
        try {
            return transactions.inNewTransaction(em -> {
                IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id, LockModeType.PESSIMISTIC_WRITE, lockHints);
                if (entity == null) {
                    return false;
                }
                IdempotencyRecord r = entity.toRecord();
                if (!ticket.owner().equals(r.owner()) || r.version() != ticket.version()) {
                    return false;
                }
                entity.assign(new IdempotencyRecord(r.scopedKey(), RecordStatus.IN_PROGRESS, r.fingerprint(), null,
                        r.requestType(), r.attempts(), r.firstSeen(), now, null, r.expiresAt(), now, null, r.version()));
                return true;
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not release the " + ticket.scopedKey(), e);
        }
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopedKey scopedKey) {
        try {
            // A read: it may join the caller's transaction (no new one, no other thread).
            return transactions.inCurrentTransaction(em -> Optional.ofNullable(
                    em.find(IdempotencyRecordEntity.class, scopedKey.id())).map(IdempotencyRecordEntity::toRecord));
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not read the " + scopedKey, e);
        }
    }

    @Override
    public int purgeExpired(Instant now, int max) {
        long nowMillis = now.toEpochMilli();
        try {
            return transactions.inNewTransaction(em -> {
                List<String> ids = em.createQuery("select r.id from IdempotencyRecord r where r.expiresAt <= :now"
                                + " and (r.status <> :inProgress or r.leaseUntil is null or r.leaseUntil <= :now)"
                                + " order by r.expiresAt", String.class)
                        .setParameter("now", nowMillis)
                        .setParameter("inProgress", RecordStatus.IN_PROGRESS)
                        .setMaxResults(max)
                        .getResultList();
                if (ids.isEmpty()) {
                    return 0;
                }
                return em.createQuery("delete from IdempotencyRecord r where r.id in :ids and r.expiresAt <= :now")
                        .setParameter("ids", ids)
                        .setParameter("now", nowMillis)
                        .executeUpdate();
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not purge expired records", e);
        }
    }

    @Override
    public List<IdempotencyRecord> all() {
        try {
            return transactions.inCurrentTransaction(em -> em.createQuery("select r from IdempotencyRecord r order by r.firstSeen",
                    IdempotencyRecordEntity.class).getResultList().stream().map(IdempotencyRecordEntity::toRecord).toList());
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not read the records", e);
        }
    }

    @Override
    public void importAll(List<IdempotencyRecord> records) {
        try {
            transactions.inNewTransaction(em -> {
                for (IdempotencyRecord r : records) {
                    IdempotencyRecordEntity e = em.find(IdempotencyRecordEntity.class, r.scopedKey().id(), LockModeType.PESSIMISTIC_WRITE, lockHints);
                    if (e == null) {
                        em.persist(IdempotencyRecordEntity.of(r));
                    } else {
                        e.assign(r);
                    }
                }
                return null;
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not import " + records.size() + " records; none was imported", e);
        }
    }

    @Override
    public int deleteAll() {
        return delete("delete from IdempotencyRecord r", null);
    }

    @Override
    public int deleteFirstSeenBefore(Instant cutoff) {
        return delete("delete from IdempotencyRecord r where r.firstSeen < :cutoff", cutoff.toEpochMilli());
    }

    @Override
    public int trimTo(int max) {
        try {
            return transactions.inNewTransaction(em -> {
                List<String> excess = em.createQuery("select r.id from IdempotencyRecord r order by r.firstSeen desc, r.id desc", String.class)
                        .setFirstResult(max).getResultList();
                int n = 0;
                for (int from = 0; from < excess.size(); from += 500) {
                    n += em.createQuery("delete from IdempotencyRecord r where r.id in :ids")
                            .setParameter("ids", excess.subList(from, Math.min(excess.size(), from + 500))).executeUpdate();
                }
                return n;
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not trim the records", e);
        }
    }

    private int delete(String jpql, Long cutoff) {
        try {
            return transactions.inNewTransaction(em -> {
                var q = em.createQuery(jpql);
                if (cutoff != null) {
                    q.setParameter("cutoff", cutoff);
                }
                return q.executeUpdate();
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not delete records", e);
        }
    }

    private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
