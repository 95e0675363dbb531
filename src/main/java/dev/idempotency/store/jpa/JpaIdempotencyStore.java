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

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
public final class JpaIdempotencyStore implements IdempotencyStore, AtomicClaims, StoreManagement, dev.idempotency.spi.SightingRecords {

    private static final Logger LOG = Logger.getLogger(JpaIdempotencyStore.class.getName());
    private static final int CLAIM_ATTEMPTS = 3;

    private static final String COMPLETE_WITHOUT_RESPONSE = "UPDATE idempotency_record SET status = ?1, response = NULL,"
            + " last_seen = ?2, completed_at = ?2, lease_until = NULL"
            + " WHERE id = ?3 AND status = 'IN_PROGRESS' AND owner = ?4 AND version = ?5";
    private static final String COMPLETE = COMPLETE_WITHOUT_RESPONSE.replace("response = NULL", "response = ?6");

    private final JpaTransactions transactions;
    private final Map<String, Object> lockHints;
    private final InsertIfAbsent insertIfAbsent;
    // The atomic claim's statements in plain JDBC, for a transaction whose connection the store can join.
    private final JdbcStatement atomicJdbc;
    private final JdbcStatement atomicJdbcWithType;
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
        this.insertIfAbsent = insertIfAbsent;
        this.atomicJdbc = insertIfAbsent.atomicSql == null ? null : JdbcStatement.of(insertIfAbsent.atomicSql);
        this.atomicJdbcWithType = insertIfAbsent.atomicWithType == null ? null : JdbcStatement.of(insertIfAbsent.atomicWithType);
    }

    /** How a claim writes a new row. */
    public enum InsertIfAbsent {
        /** Portable JPA: read, then persist when there is no row. */
        PORTABLE(null),
        /**
         * {@code INSERT ... ON CONFLICT DO NOTHING} (PostgreSQL 9.5 and later). The atomic claim is the same
         * insert in one statement that sets {@code lock_timeout} for its own wait and puts it back.
         */
        POSTGRESQL("INSERT INTO idempotency_record (%s) VALUES (%s) ON CONFLICT DO NOTHING",
                "WITH s AS (SELECT current_setting('lock_timeout') AS old, set_config('lock_timeout', ?15, true) AS lt),"
                        + " i AS (INSERT INTO idempotency_record (%s) SELECT %s FROM s ON CONFLICT DO NOTHING RETURNING 1)"
                        + " SELECT (SELECT count(*) FROM i), set_config('lock_timeout', s.old, true) FROM s"),
        /**
         * MariaDB: leased claims are portable. The atomic claim is {@code INSERT IGNORE} with its own lock wait
         * ({@code SET STATEMENT innodb_lock_wait_timeout = n FOR ...}, whole seconds).
         */
        // Not for leased claims: INSERT IGNORE takes a shared lock on the existing row, and takers of an expired
        // lease then each want the exclusive lock on it: InnoDB deadlocks them (found by the 8-takers test).
        // An atomic claim meets that only for an expired record raced by several callers: the deadlock victim's
        // transaction rolls back and its next attempt replays or waits.
        MARIADB(null, "SET STATEMENT innodb_lock_wait_timeout = %%d FOR INSERT IGNORE INTO idempotency_record (%s) VALUES (%s)"),
        /**
         * H2: leased claims are portable. The atomic claim is one {@code MERGE ... WHEN NOT MATCHED THEN INSERT}:
         * no row for a committed key (instead of a read and an insert), and, like a plain insert, a wait for
         * another transaction's uncommitted row of the key, then a duplicate-key error if it committed. Its wait
         * is bounded by a query timeout (whole seconds), as the portable insert's.
         */
        H2(null, "MERGE INTO idempotency_record t USING (VALUES (%2$s)) s (%1$s) ON t.id = s.id"
                + " WHEN NOT MATCHED THEN INSERT (%1$s) VALUES (%3$s)");

        private final String sql;
        private final String withType;
        private final String atomicSql;
        private final String atomicWithType;

        InsertIfAbsent(String template) {
            this(template, null);
        }

        InsertIfAbsent(String template, String atomicTemplate) {
            String columns = "id, namespace, principal, idem_key, status, fingerprint, attempts, first_seen, last_seen,"
                    + " expires_at, lease_until, owner, version";
            String values = "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13";
            this.sql = template == null ? null : template.formatted(columns, values);
            this.withType = template == null ? null : template.formatted(columns + ", request_type", values + ", ?14");
            // Typed: the values are selected (PostgreSQL) or form a derived table (H2), not inserted directly.
            boolean typed = "POSTGRESQL".equals(name()) || "H2".equals(name());
            String atomicValues = typed
                    ? "CAST(?1 AS VARCHAR), CAST(?2 AS VARCHAR), CAST(?3 AS VARCHAR), CAST(?4 AS VARCHAR), CAST(?5 AS VARCHAR),"
                    + " CAST(?6 AS VARCHAR), CAST(?7 AS INTEGER), CAST(?8 AS BIGINT), CAST(?9 AS BIGINT), CAST(?10 AS BIGINT),"
                    + " CAST(?11 AS BIGINT), CAST(?12 AS VARCHAR), CAST(?13 AS BIGINT)" : values;
            // Ordinal parameters must not leave a gap: the lock timeout is the one after the last value.
            String withTypeColumns = columns + ", request_type";
            this.atomicSql = atomicTemplate == null ? null
                    : atomicTemplate.formatted(columns, atomicValues, sourced(columns)).replace("?15", "?14");
            this.atomicWithType = atomicTemplate == null ? null
                    : atomicTemplate.formatted(withTypeColumns, atomicValues + (typed ? ", CAST(?14 AS VARCHAR)" : ", ?14"),
                    sourced(withTypeColumns));
        }

        /** {@code "a, b"} as {@code "s.a, s.b"}: the columns of a MERGE's source. */
        private static String sourced(String columns) {
            return "s." + columns.replace(", ", ", s.");
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
        if (insertIfAbsent.sql != null) {
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
        if (!transactions.canJoin()) {
            throw new IllegalStateException("An atomic claim needs an active transaction the store can join");
        }
        String id = request.scopedKey().id();
        try {
            if (transactions.hasJoinedConnections() && insertIfAbsent.atomicSql != null) {
                // The common case, a new key, in plain JDBC on the transaction's connection; an existing row through JPA.
                IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
                if (transactions.onJoinedConnection(c -> atomicInsert(c, id, fresh, lockWait)) == 1) {
                    return new Claim.Acquired(ClaimRules.ticket(fresh, false));
                }
                return transactions.inCurrentTransaction(em -> existingAfterAtomicInsert(em, id, request));
            }
            return transactions.inCurrentTransaction(em -> claimInTransaction(em, id, request, lockWait));
        } catch (RuntimeException e) {
            Claim.Busy busy = busy(e);
            if (busy != null) {
                LOG.log(Level.FINE, "Atomic claim of {0} met another transaction''s claim: {1}", new Object[] {request.scopedKey(), e});
                return busy;
            }
            throw new IdempotencyStoreException("Could not claim the " + request.scopedKey(), e);
        }
    }

    private Claim claimInTransaction(EntityManager em, String id, ClaimRequest request, Duration lockWait) {
        IdempotencyRecord fresh = ClaimRules.claimed(null, request, ClaimRules.Verdict.FRESH);
        if (insertIfAbsent.atomicSql != null) {
            if (atomicInsert(em, id, fresh, lockWait) == 1) {
                return new Claim.Acquired(ClaimRules.ticket(fresh, false));
            }
            return existingAfterAtomicInsert(em, id, request);
        }
        IdempotencyRecordEntity entity = em.find(IdempotencyRecordEntity.class, id);
        if (entity == null) {
            // Waits for another transaction's uncommitted row of this key, then fails if it committed. The wait is
            // bounded by a query timeout, the one per-statement bound these databases take through JPA (whole seconds).
            bind(em.createNativeQuery(fresh.requestType() == null ? PLAIN_INSERT : PLAIN_INSERT_WITH_TYPE), id, fresh)
                    .setHint(QUERY_TIMEOUT, queryTimeoutMillis(lockWait))
                    .executeUpdate();
            return new Claim.Acquired(ClaimRules.ticket(fresh, false));
        }
        return claimExisting(em, entity, request, NO_WAIT);
    }

    /** The atomic insert found a committed row of the key: answer it, or claim it again when it is free. */
    private Claim existingAfterAtomicInsert(EntityManager em, String id, ClaimRequest request) {
        if (insertIfAbsent == InsertIfAbsent.H2) {
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

    private static final String QUERY_TIMEOUT = "jakarta.persistence.query.timeout";

    /** A lock wait as a JDBC query timeout: whole seconds, at least one (zero would be no limit). */
    private static int queryTimeoutMillis(Duration lockWait) {
        long seconds = Math.max(1, lockWait.toSeconds() + (lockWait.toNanosPart() > 0 ? 1 : 0));
        return (int) (seconds * 1000);
    }

    /** Lock hints for a lock taken without waiting (another caller at it now: busy). */
    private static final Map<String, Object> NO_WAIT = Map.of("jakarta.persistence.lock.timeout", 0);

    private int atomicInsert(EntityManager em, String id, IdempotencyRecord r, Duration lockWait) {
        String sql = r.requestType() == null ? insertIfAbsent.atomicSql : insertIfAbsent.atomicWithType;
        if (insertIfAbsent == InsertIfAbsent.MARIADB) {
            // Whole seconds; 0 is "do not wait".
            long seconds = lockWait.toSeconds() + (lockWait.toNanosPart() > 0 ? 1 : 0);
            return bind(em.createNativeQuery(sql.formatted(seconds)), id, r).executeUpdate();
        }
        if (insertIfAbsent == InsertIfAbsent.H2) {
            return bind(em.createNativeQuery(sql), id, r).setHint(QUERY_TIMEOUT, queryTimeoutMillis(lockWait)).executeUpdate();
        }
        // PostgreSQL: lock_timeout 0 would mean "no limit"
        var q = bind(em.createNativeQuery(sql), id, r)
                .setParameter(r.requestType() == null ? 14 : 15, Math.max(1, lockWait.toMillis()) + "ms");
        Object[] row = (Object[]) q.getSingleResult();
        return ((Number) row[0]).intValue();
    }

    /** {@link #atomicInsert(EntityManager, String, IdempotencyRecord, Duration)} in plain JDBC. */
    private int atomicInsert(Connection c, String id, IdempotencyRecord r, Duration lockWait) throws SQLException {
        JdbcStatement statement = r.requestType() == null ? atomicJdbc : atomicJdbcWithType;
        Object[] values = values(id, r);
        if (insertIfAbsent == InsertIfAbsent.MARIADB) {
            long seconds = lockWait.toSeconds() + (lockWait.toNanosPart() > 0 ? 1 : 0);
            try (PreparedStatement ps = c.prepareStatement(statement.sql().formatted(seconds))) {
                statement.bind(ps, values);
                return ps.executeUpdate();
            }
        }
        if (insertIfAbsent == InsertIfAbsent.H2) {
            try (PreparedStatement ps = c.prepareStatement(statement.sql())) {
                statement.bind(ps, values);
                ps.setQueryTimeout(queryTimeoutMillis(lockWait) / 1000);
                return ps.executeUpdate();
            }
        }
        // PostgreSQL: lock_timeout 0 would mean "no limit"
        try (PreparedStatement ps = c.prepareStatement(statement.sql())) {
            statement.bind(ps, append(values, Math.max(1, lockWait.toMillis()) + "ms"));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** A claim's values in the order of its insert's ordinal parameters ({@code ?14}: the request type, when there is one). */
    private static Object[] values(String id, IdempotencyRecord r) {
        Object[] v = {id, r.scopedKey().namespace(), r.scopedKey().principal(), r.scopedKey().key(), r.status().name(),
                r.fingerprint(), r.attempts(), r.firstSeen().toEpochMilli(), r.lastSeen().toEpochMilli(),
                r.expiresAt().toEpochMilli(), r.leaseUntil().toEpochMilli(), r.owner(), r.version()};
        return r.requestType() == null ? v : append(v, r.requestType());
    }

    private static Object[] append(Object[] values, Object last) {
        Object[] more = java.util.Arrays.copyOf(values, values.length + 1);
        more[values.length] = last;
        return more;
    }

    /** A lock wait that timed out (not settled), or a duplicate key or deadlock (settled: retry in a new transaction). */
    private static Claim.Busy busy(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof jakarta.persistence.LockTimeoutException || c instanceof jakarta.persistence.PessimisticLockException
                    || c instanceof jakarta.persistence.QueryTimeoutException) {
                // Look further for the SQL state; default to a lock wait.
                Claim.Busy inner = c.getCause() == null ? null : busy(c.getCause());
                return inner != null ? inner : new Claim.Busy(false);
            }
            if (c instanceof java.sql.SQLException sql) {
                String state = sql.getSQLState() == null ? "" : sql.getSQLState();
                int code = sql.getErrorCode();
                // PostgreSQL 55P03 lock_not_available; MariaDB 1205; H2 50200 (HYT00); a query timeout (57014, or
                // Derby's XCL52)
                if (state.equals("55P03") || code == 1205 || code == 50200 || state.equals("HYT00")
                        || state.equals("57014") || state.equals("XCL52")
                        || c instanceof java.sql.SQLTimeoutException) {
                    return new Claim.Busy(false);
                }
                // a duplicate key (the other transaction committed first), or a deadlock victim
                if (state.startsWith("23") || lostToAnotherCommit(sql)) {
                    return new Claim.Busy(true);
                }
            }
            if (c instanceof jakarta.persistence.EntityExistsException) {
                return new Claim.Busy(true);
            }
        }
        return null;
    }

    /** SQLState 40001 (serialization failure; MariaDB's deadlock and Galera's certification failure, 1213) or 40P01. */
    @Override
    public boolean lostToAnotherCommit(Throwable failure) {
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.ArrayDeque<Throwable> next = new java.util.ArrayDeque<>(List.of(failure));
        while (!next.isEmpty()) {
            Throwable c = next.pop();
            if (!seen.add(c)) {
                continue;
            }
            if (c instanceof java.sql.SQLException sql) {
                if (lostToAnotherCommit(sql)) {
                    return true;
                }
                if (sql.getNextException() != null) {
                    next.push(sql.getNextException());
                }
            }
            if (c.getCause() != null) {
                next.push(c.getCause());
            }
            for (Throwable s : c.getSuppressed()) {
                next.push(s);
            }
        }
        return false;
    }

    /** 40001 (serialization failure; MariaDB's deadlock and Galera's certification failure, 1213) or 40P01. */
    private static boolean lostToAnotherCommit(java.sql.SQLException sql) {
        String state = sql.getSQLState() == null ? "" : sql.getSQLState();
        return state.equals("40001") || state.equals("40P01") || sql.getErrorCode() == 1213;
    }

    @Override
    public void unclaimInTransaction(Ticket ticket) {
        try {
            if (transactions.hasJoinedConnections() && transactions.canJoin()) {
                transactions.onJoinedConnection(c -> {
                    try (PreparedStatement ps = c.prepareStatement(UNCLAIM_JDBC.sql())) {
                        UNCLAIM_JDBC.bind(ps, ticket.scopedKey().id(), ticket.owner(), ticket.version());
                        return ps.executeUpdate();
                    }
                });
                return;
            }
            transactions.inCurrentTransaction(em -> em.createNativeQuery(UNCLAIM)
                    .setParameter(1, ticket.scopedKey().id())
                    .setParameter(2, ticket.owner())
                    .setParameter(3, ticket.version())
                    .executeUpdate());
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("Could not undo the claim of the " + ticket.scopedKey(), e);
        }
    }

    private int insert(EntityManager em, String id, IdempotencyRecord r) {
        return bind(em.createNativeQuery(r.requestType() == null ? insertIfAbsent.sql : insertIfAbsent.withType), id, r)
                .executeUpdate();
    }

    private static jakarta.persistence.Query bind(jakarta.persistence.Query insert, String id, IdempotencyRecord r) {
        insert
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
        return insert;
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
                throw leaseLost(ticket);
            }
            return null;
        };
        try {
            if (completion.joinTransaction() && transactions.hasJoinedConnections() && transactions.canJoin()) {
                JdbcStatement statement = completion.response() == null ? COMPLETE_WITHOUT_RESPONSE_JDBC : COMPLETE_JDBC;
                int updated = transactions.onJoinedConnection(c -> {
                    try (PreparedStatement ps = c.prepareStatement(statement.sql())) {
                        statement.bind(ps, completion.status().name(), now, id, ticket.owner(), ticket.version(),
                                completion.response());
                        return ps.executeUpdate();
                    }
                });
                if (updated != 1) {
                    throw leaseLost(ticket);
                }
            } else if (completion.joinTransaction()) {
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
        String sql = switch (insertIfAbsent) {
            case POSTGRESQL -> "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
            case MARIADB -> "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
            case H2 -> "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)";
            case PORTABLE -> throw new UnsupportedOperationException("The database of this store is not known");
        };
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

    /** Not a claim whose lease is alive at {@code :now} (SPEC L3). */
    private static final String NOT_LIVE = "(r.status <> :inProgress or r.leaseUntil is null or r.leaseUntil <= :now)";

    @Override
    public int delete(Deletion which, Instant now, int batchSize, java.util.function.Consumer<ScopedKey> deleted) {
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
                List<ScopedKey> batch = transactions.inNewTransaction(em -> deleteBatch(em, which, where, now, limit));
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
    private List<ScopedKey> deleteBatch(EntityManager em, Deletion which, String where, Instant now, int limit) {
        var select = em.createQuery("select r.id, r.namespace, r.principal, r.key from IdempotencyRecord r where " + where
                + " order by r.firstSeen, r.id", Object[].class).setMaxResults(limit);
        List<Object[]> rows = bindDeletion(select, which, now).getResultList();
        if (rows.isEmpty()) {
            return List.of();
        }
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

    private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
