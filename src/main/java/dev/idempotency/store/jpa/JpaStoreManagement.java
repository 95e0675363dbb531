package dev.idempotency.store.jpa;

import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;

import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The JPA store's management of its records (the {@code StoreManagement} and purge operations): purge, export, import
 * and deletions, each in transactions of its own, in portable JPQL; never a claim whose lease is alive.
 */
final class JpaStoreManagement {

    private final JpaTransactions transactions;
    private final Map<String, Object> lockHints;

    JpaStoreManagement(JpaTransactions transactions, Map<String, Object> lockHints) {
        this.transactions = transactions;
        this.lockHints = lockHints;
    }

    int purgeExpired(Instant now, int max) {
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
                // Judged again as it is deleted: a row taken over or claimed again in between is kept.
                return em.createQuery("delete from IdempotencyRecord r where r.id in :ids and r.expiresAt <= :now and " + NOT_LIVE)
                        .setParameter("ids", ids)
                        .setParameter("now", nowMillis)
                        .setParameter("inProgress", RecordStatus.IN_PROGRESS)
                        .executeUpdate();
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not purge expired records", e);
        }
    }

    List<IdempotencyRecord> all() {
        try {
            return transactions.inCurrentTransaction(em -> em.createQuery("select r from IdempotencyRecord r order by r.firstSeen, r.id",
                    IdempotencyRecordEntity.class).getResultList().stream().map(IdempotencyRecordEntity::toRecord).toList());
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not read the records", e);
        }
    }

    /** How many records an export reads, and an import writes, before the entity manager lets go of them. */
    static final int TRANSFER_BATCH = 200;

    /**
     * Every record, in the order of their ids, in batches of {@link #TRANSFER_BATCH} read in transactions of their own
     * (each after the last one's id, along the primary key's index): a store of any size is exported holding one batch,
     * each batch a range read of the index, and no record twice (an id never changes).
     */
    void forEach(java.util.function.Consumer<IdempotencyRecord> each) {
        String afterId = null;
        while (true) {
            String id = afterId;
            List<IdempotencyRecord> batch;
            try {
                batch = transactions.inNewTransaction(em -> (id == null
                        ? em.createQuery("select r from IdempotencyRecord r order by r.id", IdempotencyRecordEntity.class)
                        : em.createQuery("select r from IdempotencyRecord r where r.id > :id order by r.id", IdempotencyRecordEntity.class)
                                .setParameter("id", id))
                        .setMaxResults(TRANSFER_BATCH).getResultList().stream().map(IdempotencyRecordEntity::toRecord).toList());
            } catch (RuntimeException e) {
                throw new IdempotencyStoreException("Could not read the records", e);
            }
            batch.forEach(each);
            if (batch.size() < TRANSFER_BATCH) {
                return;
            }
            afterId = batch.get(batch.size() - 1).scopedKey().id();
        }
    }

    /** Imports the records in one transaction; {@code now} non-null: refuses (nothing written) to replace a live claim. */
    void importAll(Iterable<IdempotencyRecord> records, Instant now) {
        try {
            transactions.inNewTransaction(em -> {
                int written = 0;
                for (IdempotencyRecord r : records) {
                    if (++written % TRANSFER_BATCH == 0) {
                        em.flush(); // written (and their rows locked) in the transaction, and let go of here
                        em.clear();
                    }
                    IdempotencyRecordEntity seen = em.find(IdempotencyRecordEntity.class, r.scopedKey().id());
                    if (seen != null && dev.idempotency.spi.StoreManagement.keepsNewer(seen.toRecord(), r)) {
                        // The key holds this answer or a later one: nothing to write, and its row is not locked (a
                        // call of the key meanwhile is answered as ever, not told "in progress" until the import ends).
                        em.detach(seen);
                        continue;
                    }
                    IdempotencyRecordEntity e;
                    if (seen != null) {
                        em.refresh(seen, LockModeType.PESSIMISTIC_WRITE, lockHints); // read again, locked, to be judged
                        e = seen;
                    } else {
                        e = em.find(IdempotencyRecordEntity.class, r.scopedKey().id(), LockModeType.PESSIMISTIC_WRITE, lockHints);
                    }
                    if (e == null) {
                        em.persist(IdempotencyRecordEntity.of(r));
                    } else {
                        IdempotencyRecord existing = e.toRecord();
                        if (now != null && existing.status() == RecordStatus.IN_PROGRESS && !existing.isLeaseExpired(now)) {
                            throw new dev.idempotency.spi.StoreManagement.LiveClaimException(r.scopedKey());
                        }
                        if (!dev.idempotency.spi.StoreManagement.keepsNewer(existing, r)) {
                            e.assign(r);
                        }
                    }
                }
                return null;
            });
        } catch (dev.idempotency.spi.StoreManagement.LiveClaimException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not import the records; none was imported", e);
        }
    }

    /** Not a claim whose lease is alive at {@code :now}: nothing deletes a live claim. */
    private static final String NOT_LIVE = "(r.status <> :inProgress or r.leaseUntil is null or r.leaseUntil <= :now)";

    int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> aboutToDelete,
               java.util.function.Consumer<ScopedKey> deleted) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1");
        }
        String where = which instanceof Deletion.FirstSeenBefore ? "r.firstSeen < :cutoff and " + NOT_LIVE : NOT_LIVE;
        try {
            long remaining = which instanceof Deletion.OldestBeyond o
                    ? Math.max(0, transactions.inNewTransaction(em -> em.createQuery("select count(r) from IdempotencyRecord r", Long.class)
                    .getSingleResult()) - o.keep())
                    : Long.MAX_VALUE;
            int total = 0;
            while (remaining > 0) {
                int limit = (int) Math.min(batchSize, remaining);
                List<ScopedKey> batch = transactions.inNewTransaction(em -> deleteBatch(em, which, where, now, limit, aboutToDelete));
                if (batch.isEmpty()) {
                    break;
                }
                batch.forEach(deleted);
                total += batch.size();
                remaining -= batch.size();
            }
            return total;
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not delete records", e);
        }
    }

    /** One batch, oldest first: selected, deleted under the same condition judged again, and the deleted keys. */
    private List<ScopedKey> deleteBatch(EntityManager em, Deletion which, String where, Instant now, int limit,
                                        java.util.function.Consumer<ScopedKey> aboutToDelete) {
        var select = em.createQuery("select r.id, r.namespace, r.principal, r.key from IdempotencyRecord r where " + where
                + " order by r.firstSeen, r.id", Object[].class).setMaxResults(limit);
        List<Object[]> rows = bindDeletion(select, which, now).getResultList();
        if (rows.isEmpty()) {
            return List.of();
        }
        // Told before the rows go (the cache forgets them on every node first); a refusal rolls this batch back.
        rows.forEach(row -> aboutToDelete.accept(new ScopedKey((String) row[1], (String) row[2], (String) row[3])));
        List<String> ids = rows.stream().map(row -> (String) row[0]).toList();
        int n = bindDeletion(em.createQuery("delete from IdempotencyRecord r where r.id in :ids and " + where), which, now)
                .setParameter("ids", ids).executeUpdate();
        java.util.Set<String> kept = n == ids.size() ? java.util.Set.of()
                : new java.util.HashSet<>(em.createQuery("select r.id from IdempotencyRecord r where r.id in :ids", String.class)
                .setParameter("ids", ids).getResultList());
        return rows.stream().filter(row -> !kept.contains((String) row[0]))
                .map(row -> new ScopedKey((String) row[1], (String) row[2], (String) row[3])).toList();
    }

    private static <Q extends jakarta.persistence.Query> Q bindDeletion(Q q, Deletion which, Instant now) {
        q.setParameter("inProgress", RecordStatus.IN_PROGRESS).setParameter("now", now.toEpochMilli());
        if (which instanceof Deletion.FirstSeenBefore f) {
            q.setParameter("cutoff", f.cutoff().toEpochMilli());
        }
        return q;
    }
}
