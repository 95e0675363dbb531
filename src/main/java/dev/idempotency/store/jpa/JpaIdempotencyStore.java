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
 * <li><b>claim</b>, in a transaction of its own: on PostgreSQL an insert that does nothing when the row
 *     exists ({@link InsertIfAbsent}), so that a new key costs one statement and a duplicate no
 *     error; elsewhere (portable JPA) a plain read, then an insert when there is no row (a concurrent insert of
 *     the same key loses on the primary key and retries, now finding the row). A live row is returned
 *     untouched; an expired, released or lease-expired row is locked ({@code PESSIMISTIC_WRITE}), judged
 *     again under the lock, and claimed (exactly one taker).</li>
 * <li><b>complete</b>: one fenced {@code UPDATE ... WHERE id = ? AND status = 'IN_PROGRESS' AND owner = ? AND
 *     version = ?} (the row lock it takes orders it after any take-over; no row updated means the lease was
 *     lost); inside the caller's JTA transaction when asked and there is one.</li>
 * <li><b>release</b>: lock, check owner and version, free the row (kept, with its attempts, as
 *     {@code IN_PROGRESS} with no owner).</li>
 * </ul>
 */
public final class JpaIdempotencyStore implements IdempotencyStore {

    private static final Logger LOG = Logger.getLogger(JpaIdempotencyStore.class.getName());
    private static final int CLAIM_ATTEMPTS = 3;

    private static final String COMPLETE_WITHOUT_RESPONSE = "UPDATE idempotency_record SET status = ?1, response = NULL,"
            + " last_seen = ?2, completed_at = ?2, lease_until = NULL"
            + " WHERE id = ?3 AND status = 'IN_PROGRESS' AND owner = ?4 AND version = ?5";
    private static final String COMPLETE = COMPLETE_WITHOUT_RESPONSE.replace("response = NULL", "response = ?6");

    private final JpaTransactions transactions;
    private final Map<String, Object> lockHints;
    private final InsertIfAbsent insertIfAbsent;

    /**
     * @param transactions how work is run (resource-local or JTA)
     * @param lockTimeout  how long a pessimistic lock waits (the {@code jakarta.persistence.lock.timeout}
     *                     hint; PostgreSQL ignores it and uses its own {@code lock_timeout})
     */
    public JpaIdempotencyStore(JpaTransactions transactions, Duration lockTimeout) {
        this(transactions, lockTimeout, InsertIfAbsent.PORTABLE);
    }

    /**
     * @param insertIfAbsent how a claim inserts: {@link JpaSchema#insertIfAbsent(javax.sql.DataSource)} tells
     *                       it from the database
     */
    public JpaIdempotencyStore(JpaTransactions transactions, Duration lockTimeout, InsertIfAbsent insertIfAbsent) {
        this.transactions = transactions;
        this.lockHints = Map.of("jakarta.persistence.lock.timeout", lockTimeout.toMillis());
        this.insertIfAbsent = insertIfAbsent;
    }

    /** How a claim writes a new row. */
    public enum InsertIfAbsent {
        /** Portable JPA: read, then persist when there is no row. */
        PORTABLE(null),
        /** {@code INSERT ... ON CONFLICT DO NOTHING} (PostgreSQL 9.5 and later). */
        POSTGRESQL("INSERT INTO idempotency_record (%s) VALUES (%s) ON CONFLICT DO NOTHING");
        // Not for MariaDB/MySQL: INSERT IGNORE takes a shared lock on the existing row, and takers of an expired
        // lease then each want the exclusive lock on it: InnoDB deadlocks them (found by the 8-takers test).

        private final String sql;
        private final String withType;

        InsertIfAbsent(String template) {
            String columns = "id, namespace, principal, idem_key, status, fingerprint, attempts, first_seen, last_seen,"
                    + " expires_at, lease_until, owner, version";
            String values = "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13";
            this.sql = template == null ? null : template.formatted(columns, values);
            this.withType = template == null ? null : template.formatted(columns + ", request_type", values + ", ?14");
        }
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
        if (insertIfAbsent != InsertIfAbsent.PORTABLE) {
            IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
            if (insert(em, id, fresh) == 1) {
                return new Claim.Acquired(ClaimRules.ticket(fresh, false));
            }
        }
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

    private int insert(EntityManager em, String id, IdempotencyRecord r) {
        var insert = em.createNativeQuery(r.requestType() == null ? insertIfAbsent.sql : insertIfAbsent.withType)
                .setParameter(1, id)
                .setParameter(2, r.scopedKey().namespace())
                .setParameter(3, r.scopedKey().principal())
                .setParameter(4, r.scopedKey().key())
                .setParameter(5, r.status().name())
                .setParameter(6, r.fingerprint())
                .setParameter(7, r.attempts())
                .setParameter(8, r.firstSeen().toEpochMilli())
                .setParameter(9, r.lastSeen().toEpochMilli())
                .setParameter(10, r.expiresAt().toEpochMilli())
                .setParameter(11, r.leaseUntil().toEpochMilli())
                .setParameter(12, r.owner())
                .setParameter(13, r.version());
        if (r.requestType() != null) {
            insert.setParameter(14, r.requestType());
        }
        return insert.executeUpdate();
    }

    @Override
    public void complete(Ticket ticket, Completion completion) {
        String id = ticket.scopedKey().id();
        long now = completion.now().toEpochMilli();
        Function<EntityManager, Void> work = em -> {
            // Plain SQL that every database takes: a JPQL update would be translated again on every call.
            var update = em.createNativeQuery(completion.response() == null ? COMPLETE_WITHOUT_RESPONSE : COMPLETE)
                    .setParameter(1, completion.status().name())
                    .setParameter(2, now)
                    .setParameter(3, id)
                    .setParameter(4, ticket.owner())
                    .setParameter(5, ticket.version());
            if (completion.response() != null) {
                update.setParameter(6, completion.response());
            }
            int updated = update.executeUpdate();
            if (updated != 1) {
                throw new IdempotencyLeaseLostException("The claim on the " + ticket.scopedKey()
                        + " was lost (taken over after its lease expired); its completion is refused");
            }
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
