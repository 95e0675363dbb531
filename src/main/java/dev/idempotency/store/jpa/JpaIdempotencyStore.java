package dev.idempotency.store.jpa;

import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.AtomicClaims;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.ClaimRules;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.StoreManagement;
import dev.idempotency.spi.Ticket;

import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The JPA store: portable JPA only (Hibernate, EclipseLink). The database is the judge of "new":
 *
 * <ul>
 * <li><b>claim</b>, in a transaction of its own: where the database's {@link Dialect} has one (PostgreSQL), an
 *     insert that does nothing when the row exists, so that a new key costs one statement and a duplicate no
 *     error; elsewhere (portable JPA) a plain read, then an insert when there is no row (a concurrent insert of
 *     the same key loses on the primary key and retries, now finding the row). A live row is returned
 *     untouched; an expired, released or lease-expired row is locked ({@code PESSIMISTIC_WRITE}), judged
 *     again under the lock, and claimed (exactly one taker).</li>
 * <li><b>complete</b>: one fenced {@code UPDATE ... WHERE id = ? AND status = 'IN_PROGRESS' AND owner = ? AND
 *     version = ?} (the row lock it takes orders it after any take-over; no row updated means the lease was
 *     lost); inside the caller's JTA transaction when asked and there is one.</li>
 * <li><b>release</b>: lock, check owner and version, free the row (kept, with its attempts, as
 *     {@code IN_PROGRESS} with no owner).</li>
 * <li><b>claim in a transaction</b> (atomic): the dialect's insert of a new key's row, waiting a bounded time for
 *     another transaction's row of the key, sent as the transaction sends it (plain JDBC on its connection, or JPA).</li>
 * </ul>
 *
 * <p>What differs between databases is its {@link Dialect}'s; purge, export, import and deletions are
 * {@link JpaStoreManagement}'s.
 *
 * <p>Over 400 lines on purpose: each method of the store SPI is its statements in order (claim, complete, release, claim
 * in a transaction, sightings); what differs between databases is in the dialects and the management in {@link
 * JpaStoreManagement}, already apart.
 */
public final class JpaIdempotencyStore implements IdempotencyStore, AtomicClaims, StoreManagement, dev.idempotency.spi.SightingRecords {

    private static final Logger LOG = Logger.getLogger(JpaIdempotencyStore.class.getName());
    private static final int CLAIM_ATTEMPTS = 3;

    private static final String COMPLETE_WITHOUT_RESPONSE = "UPDATE idempotency_record SET status = ?1, response = NULL,"
            + " last_seen = ?2, completed_at = ?2, lease_until = NULL"
            + " WHERE id = ?3 AND status = 'IN_PROGRESS' AND owner = ?4 AND version = ?5";
    private static final String COMPLETE = COMPLETE_WITHOUT_RESPONSE.replace("response = NULL", "response = ?6");

    private final JpaTransactions transactions;
    private final Map<String, Object> lockHints;
    private final Dialect dialect;
    private final JpaStoreManagement management;
    private static final JdbcStatement COMPLETE_JDBC = JdbcStatement.of(COMPLETE);
    private static final JdbcStatement COMPLETE_WITHOUT_RESPONSE_JDBC = JdbcStatement.of(COMPLETE_WITHOUT_RESPONSE);
    private static final String UNCLAIM = "DELETE FROM idempotency_record WHERE id = ?1 AND owner = ?2 AND version = ?3";
    private static final JdbcStatement UNCLAIM_JDBC = JdbcStatement.of(UNCLAIM);

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
        this.dialect = insertIfAbsent.dialect();
        this.management = new JpaStoreManagement(transactions, lockHints);
    }

    /** Which database's dialect the store speaks (what differs between databases is a {@link Dialect}'s). */
    public enum InsertIfAbsent {
        /** A database the store does not know: portable JPA (a read, then an insert), every known failure recognised. */
        PORTABLE(Dialect.GENERIC),
        /** PostgreSQL 9.5 and later: {@code INSERT ... ON CONFLICT DO NOTHING}, {@code lock_timeout}. */
        POSTGRESQL(new PostgresDialect()),
        /** MariaDB: {@code INSERT IGNORE} with {@code SET STATEMENT innodb_lock_wait_timeout} for atomic claims. */
        MARIADB(new MariaDbDialect()),
        /** H2: {@code MERGE ... WHEN NOT MATCHED THEN INSERT} for atomic claims. */
        H2(new H2Dialect()),
        /** Apache Derby: portable claims. */
        DERBY(new DerbyDialect());

        private final Dialect dialect;

        InsertIfAbsent(Dialect dialect) {
            this.dialect = dialect;
        }

        Dialect dialect() {
            return dialect;
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
        IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
        String insertIfAbsent = dialect.insertIfAbsent(fresh.requestType() != null);
        if (insertIfAbsent != null && new NativeStatement(insertIfAbsent, null, Dialect.values(id, fresh), 0, false).executeOn(em) == 1) {
            return new Claim.Acquired(ClaimRules.ticket(fresh, false));
        }
        IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id);
        if (entity == null) {
            em.persist(IdempotencyRecordEntity.of(fresh));
            em.flush();
            return new Claim.Acquired(ClaimRules.ticket(fresh, false));
        }
        return claimExisting(em, entity, request, lockHints);
    }

    /**
     * An existing row: answered as it is when live; else (expired, released, or a leased claim whose lease
     * ended) locked, judged again under the lock, and claimed: exactly one taker.
     */
    private Claim claimExisting(EntityManager em, IdempotencyRecordEntity entity, ClaimRequest request, Map<String, Object> lock) {
        if (ClaimRules.judge(entity.toRecord(), request) == ClaimRules.Verdict.EXISTING) {
            return new Claim.Existing(entity.toRecord());
        }
        em.refresh(entity, LockModeType.PESSIMISTIC_WRITE, lock);
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

    // ------------------------------------------------------------------------------------ atomic claims

    @Override
    public boolean canJoin() {
        return transactions.canJoin();
    }

    /**
     * The claim row written in the caller's transaction. PostgreSQL and MariaDB: one insert that does nothing
     * when the row exists and waits at most {@code lockWait} for another transaction's uncommitted row
     * (then {@link Claim.Busy}); elsewhere, a read and a persist whose flush fails when another transaction
     * committed the key first ({@link Claim.Busy}, settled: the caller's transaction is marked for rollback by
     * the JPA provider). An existing row is read again with a locking read (the latest committed version,
     * whatever the isolation level), and claimed under an exclusive lock, without waiting, when it is expired,
     * released or a leased claim whose lease ended.
     */
    @Override
    public Claim claimInTransaction(ClaimRequest request, Duration lockWait) {
        // its statements may wait that long on another transaction's claim: their connections' bound outlasts the wait
        return BoundedDataSource.waitingOnLocks(lockWait, () -> claimInTransactionWaiting(request, lockWait));
    }

    private Claim claimInTransactionWaiting(ClaimRequest request, Duration lockWait) {
        if (!transactions.canJoin()) {
            throw new IllegalStateException("An atomic claim needs an active transaction the store can join");
        }
        String id = request.scopedKey().id();
        try {
            IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
            NativeStatement atomic = dialect.atomicInsert(id, fresh, lockWait);
            if (atomic == null) {
                return transactions.inCurrentTransaction(em -> portableClaimInTransaction(em, id, fresh, request, lockWait));
            }
            // The common case, a new key, in one statement; an existing row through JPA.
            if (transactions.execute(atomic) == 1) {
                return new Claim.Acquired(ClaimRules.ticket(fresh, false));
            }
            return transactions.inCurrentTransaction(em -> existingAfterAtomicInsert(em, id, request));
        } catch (RuntimeException e) {
            Claim.Busy busy = dialect.busyIn(e);
            if (busy != null) {
                LOG.log(Level.FINE, "Atomic claim of {0} met another transaction''s claim: {1}", new Object[] {request.scopedKey(), e});
                return busy;
            }
            throw new IdempotencyStoreException("Could not claim the " + request.scopedKey(), e);
        }
    }

    /**
     * The optimistic claim's one write: the finished record inserted in the caller's transaction, after the work ran.
     * PostgreSQL, MariaDB and H2: the atomic insert with the record's response and completion time (one statement, no
     * read); a committed row of the key is then answered as it is when live, or claimed again and completed when it is
     * expired or released (two more statements, rare). Elsewhere: a claim, then a completion, in the transaction.
     */
    @Override
    public Claim claimFinishedInTransaction(ClaimRequest request, Completion completion, Duration lockWait) {
        return BoundedDataSource.waitingOnLocks(lockWait, () -> claimFinishedInTransactionWaiting(request, completion, lockWait));
    }

    private Claim claimFinishedInTransactionWaiting(ClaimRequest request, Completion completion, Duration lockWait) {
        if (!transactions.canJoin()) {
            throw new IllegalStateException("An optimistic claim needs an active transaction the store can join");
        }
        String id = request.scopedKey().id();
        IdempotencyRecord finished = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH)
                .finished(completion.status(), completion.response(), completion.now());
        NativeStatement atomic = dialect.finishedInsert(id, finished, lockWait);
        Claim claim;
        try {
            if (atomic != null && transactions.execute(atomic) == 1) {
                return new Claim.Acquired(ClaimRules.ticket(finished, false));
            }
        } catch (RuntimeException e) {
            Claim.Busy busy = dialect.busyIn(e);
            if (busy != null) {
                LOG.log(Level.FINE, "Optimistic claim of {0} met another transaction''s row: {1}", new Object[] {request.scopedKey(), e});
                return busy;
            }
            throw new IdempotencyStoreException("Could not store the outcome of the " + request.scopedKey(), e);
        }
        // A committed row of the key (or a database without an atomic insert): judged as an atomic claim would be.
        claim = atomic == null ? claimInTransaction(request, lockWait) : claimAfterAtomicInsert(id, request);
        if (claim instanceof Claim.Acquired acquired) {
            complete(acquired.ticket(), new Completion(completion.status(), completion.response(), completion.now(), true));
        }
        return claim;
    }

    private Claim claimAfterAtomicInsert(String id, ClaimRequest request) {
        try {
            return transactions.inCurrentTransaction(em -> existingAfterAtomicInsert(em, id, request));
        } catch (RuntimeException e) {
            Claim.Busy busy = dialect.busyIn(e);
            if (busy != null) {
                return busy;
            }
            throw new IdempotencyStoreException("Could not store the outcome of the " + request.scopedKey(), e);
        }
    }

    /** A read, then, for a new key, a plain insert that waits (bounded by a query timeout) for another transaction's row of the key. */
    private Claim portableClaimInTransaction(EntityManager em, String id, IdempotencyRecord fresh, ClaimRequest request,
                                             Duration lockWait) {
        IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id);
        if (entity == null) {
            // Waits for another transaction's uncommitted row of this key, then fails if it committed. The wait is
            // bounded by a query timeout, the one per-statement bound these databases take through JPA (whole seconds).
            boolean typed = fresh.requestType() != null;
            new NativeStatement(typed ? PLAIN_INSERT_WITH_TYPE : PLAIN_INSERT, null, Dialect.values(id, fresh),
                    Dialect.queryTimeoutSeconds(lockWait), false).executeOn(em);
            return new Claim.Acquired(ClaimRules.ticket(fresh, false));
        }
        return claimExisting(em, entity, request, NO_WAIT);
    }

    /** The atomic insert found a committed row of the key: answer it, or claim it again when it is free. */
    private Claim existingAfterAtomicInsert(EntityManager em, String id, ClaimRequest request) {
        if (dialect.plainReadSeesCommittedRow()) {
            // A committed row (H2 reads committed rows, so a plain read finds it).
            IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id);
            return entity == null ? new Claim.Busy(true) : claimExisting(em, entity, request, NO_WAIT);
        }
        // A committed row: read its latest version (a locking read, whatever the snapshot).
        IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id, LockModeType.PESSIMISTIC_READ, NO_WAIT);
        // Taken without waiting: the insert already waited for the key's other transaction.
        return entity == null ? new Claim.Busy(true) : claimExisting(em, entity, request, NO_WAIT);
    }

    private static final String PLAIN_INSERT = "INSERT INTO idempotency_record (id, namespace, principal, idem_key, status,"
            + " fingerprint, attempts, first_seen, last_seen, expires_at, lease_until, owner, version)"
            + " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    private static final String PLAIN_INSERT_WITH_TYPE = PLAIN_INSERT.replace(", version)", ", version, request_type)")
            .replace("?13)", "?13, ?14)");

    /** Lock hints for a lock taken without waiting (another caller at it now: busy). */
    private static final Map<String, Object> NO_WAIT = Map.of("jakarta.persistence.lock.timeout", 0);

    /** A serialization failure in the database's words, anywhere in the failure ({@link Dialect#lostToAnotherCommitIn}). */
    @Override
    public boolean lostToAnotherCommit(Throwable failure) {
        return dialect.lostToAnotherCommitIn(failure);
    }

    @Override
    public void unclaimInTransaction(Ticket ticket) {
        try {
            transactions.execute(new NativeStatement(UNCLAIM, UNCLAIM_JDBC,
                    new Object[] {ticket.scopedKey().id(), ticket.owner(), ticket.version()}, 0, false));
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not undo the claim of the " + ticket.scopedKey(), e);
        }
    }

    /**
     * One fenced {@code UPDATE} (plain SQL that every database takes: a JPQL update would be translated again on every
     * call): in the caller's transaction when the completion joins it (on its connection where the store can join it),
     * else in a transaction of its own. No row updated: the claim was taken over.
     */
    @Override
    public void complete(Ticket ticket, Completion completion) {
        boolean withResponse = completion.response() != null;
        Object[] values = {completion.status().name(), completion.now().toEpochMilli(), ticket.scopedKey().id(), ticket.owner(),
                ticket.version(), completion.response()};
        NativeStatement update = new NativeStatement(withResponse ? COMPLETE : COMPLETE_WITHOUT_RESPONSE,
                withResponse ? COMPLETE_JDBC : COMPLETE_WITHOUT_RESPONSE_JDBC,
                withResponse ? values : java.util.Arrays.copyOf(values, 5), 0, false);
        int updated;
        try {
            updated = completion.joinTransaction() ? transactions.execute(update) : transactions.inNewTransaction(update::executeOn);
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not store the outcome of the " + ticket.scopedKey(), e);
        }
        if (updated != 1) {
            throw leaseLost(ticket);
        }
    }

    private static IdempotencyLeaseLostException leaseLost(Ticket ticket) {
        return new IdempotencyLeaseLostException("The claim on the " + ticket.scopedKey()
                + " was lost (taken over after its lease expired); its completion is refused");
    }

    /**
     * The database's time in epoch milliseconds (PostgreSQL, MariaDB, H2); a store on another database, or
     * given an application's own persistence unit, follows each node's clock (its database is not known).
     */
    @Override
    public Instant currentTime() {
        String sql = dialect.clockQuery();
        if (sql == null) {
            throw new UnsupportedOperationException("The database of this store is not known");
        }
        try {
            return Instant.ofEpochMilli(transactions.inNewTransaction(em ->
                    ((Number) em.createNativeQuery(sql).getSingleResult()).longValue()));
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not read the database's clock", e);
        }
    }

    private static final String RENEW = "UPDATE idempotency_record SET lease_until = ?1"
            + " WHERE id = ?2 AND status = 'IN_PROGRESS' AND owner = ?3 AND version = ?4";

    /** One fenced {@code UPDATE} in a transaction of its own: no row updated means the claim is no longer held. */
    @Override
    public boolean renew(Ticket ticket, Instant leaseUntil) {
        try {
            return transactions.inNewTransaction(em -> em.createNativeQuery(RENEW)
                    .setParameter(1, leaseUntil.toEpochMilli())
                    .setParameter(2, ticket.scopedKey().id())
                    .setParameter(3, ticket.owner())
                    .setParameter(4, ticket.version())
                    .executeUpdate()) == 1;
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not renew the lease of the " + ticket.scopedKey(), e);
        }
    }

    private static final String SIGHTED = "UPDATE idempotency_record SET last_seen = ?1 WHERE id = ?2 AND last_seen < ?1";

    /** One {@code UPDATE} per id, all in one transaction of their own; no lock beyond the rows updated. */
    @Override
    public void recordSightings(Map<ScopedKey, Instant> lastSeen) {
        if (lastSeen.isEmpty()) {
            return;
        }
        try {
            transactions.inNewTransaction(em -> {
                // In id order: two nodes' batches lock their common rows in the same order (no deadlock).
                java.util.TreeMap<String, Instant> byId = new java.util.TreeMap<>();
                lastSeen.forEach((key, at) -> byId.put(key.id(), at));
                byId.forEach((id, at) -> em.createNativeQuery(SIGHTED).setParameter(1, at.toEpochMilli()).setParameter(2, id).executeUpdate());
                return null;
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not record " + lastSeen.size() + " sightings", e);
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
                // Fenced by status too: a finished record is never made claimable again (its owner and version
                // are still the ticket's after the completion).
                if (r.status() != RecordStatus.IN_PROGRESS || !ticket.owner().equals(r.owner()) || r.version() != ticket.version()) {
                    return false;
                }
                entity.assign(r.released(now));
                return true;
            });
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not release the " + ticket.scopedKey(), e);
        }
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopedKey scopedKey) {
        try {
            String id = scopedKey.id();
            if (transactions.hasJoinedConnections() && transactions.canJoin()
                    && !transactions.onJoinedConnection(c -> exists(c, id))) {
                // In a transaction whose connection the store can join (the optimistic claim's read of a new key, before
                // its work): a plain JDBC probe by primary key, without the entity manager's query handling, most often
                // answers "none".
                return Optional.empty();
            }
            // A read: it may join the caller's transaction (no new one, no other thread).
            return transactions.inCurrentTransaction(em -> Optional.ofNullable(
                    em.find(IdempotencyRecordEntity.class, id)).map(IdempotencyRecordEntity::toRecord));
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not read the " + scopedKey, e);
        }
    }

    private static final String EXISTS = "SELECT 1 FROM idempotency_record WHERE id = ?";

    private static boolean exists(java.sql.Connection c, String id) throws java.sql.SQLException {
        try (java.sql.PreparedStatement ps = c.prepareStatement(EXISTS)) {
            ps.setString(1, id);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    @Override
    public int purgeExpired(Instant now, int max) {
        return management.purgeExpired(now, max);
    }

    @Override
    public List<IdempotencyRecord> all() {
        return management.all();
    }

    @Override
    public void importAll(List<IdempotencyRecord> records) {
        management.importAll(records, null);
    }

    @Override
    public void importAll(List<IdempotencyRecord> records, Instant now) {
        management.importAll(records, now);
    }

    @Override
    public void importEach(Iterable<IdempotencyRecord> records, Instant now) {
        management.importAll(records, now);
    }

    @Override
    public void forEach(java.util.function.Consumer<IdempotencyRecord> each) {
        management.forEach(each);
    }

    @Override
    public int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> deleted) {
        return management.delete(which, now, batchSize, k -> { }, deleted);
    }

    @Override
    public int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> aboutToDelete,
                      java.util.function.Consumer<ScopedKey> deleted) {
        return management.delete(which, now, batchSize, aboutToDelete, deleted);
    }
}
