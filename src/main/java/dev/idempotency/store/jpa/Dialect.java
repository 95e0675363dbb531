package dev.idempotency.store.jpa;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.IdempotencyRecord;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * What one database does its own way, and nothing else: the store's insert-if-absent, its atomic insert (with the wait
 * for another transaction's row of the key, bounded in the database's own words), the query of the database's clock,
 * and the failures it reports for a wait that gave up, a key another transaction committed first, or a commit that lost
 * to another. How a statement is sent (plain JDBC on the transaction's connection, or through JPA) is the transaction's.
 *
 * <p>To support another database: a subclass here, chosen by {@link JpaSchema#insertIfAbsent(String)}, and its DDL under
 * {@code META-INF/idempotency/ddl/}.
 */
abstract class Dialect {

    static final String COLUMNS = "id, namespace, principal, idem_key, status, fingerprint, attempts, first_seen, last_seen,"
            + " expires_at, lease_until, owner, version";
    static final String VALUES = "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13";
    /** The values as typed expressions, for databases that select them or read them from a derived table. */
    static final String TYPED_VALUES = "CAST(?1 AS VARCHAR), CAST(?2 AS VARCHAR), CAST(?3 AS VARCHAR), CAST(?4 AS VARCHAR),"
            + " CAST(?5 AS VARCHAR), CAST(?6 AS VARCHAR), CAST(?7 AS INTEGER), CAST(?8 AS BIGINT), CAST(?9 AS BIGINT),"
            + " CAST(?10 AS BIGINT), CAST(?11 AS BIGINT), CAST(?12 AS VARCHAR), CAST(?13 AS BIGINT)";

    /**
     * A leased claim's insert that does nothing when the key has a row (one statement for a new key, no error for a
     * duplicate); {@code null}: the portable way (a read, then an insert).
     */
    String insertIfAbsent(boolean withRequestType) {
        return null;
    }

    /**
     * The atomic claim's insert of a new key's row (or the optimistic claim's insert of a finished record: the shape of
     * the row is {@link Shape#of} the record's), waiting at most {@code lockWait} for another transaction's
     * uncommitted row of the key; {@code null}: the portable way (a read, then a plain insert with a query timeout).
     * It writes 1 row for a new key, 0 when a committed row of the key exists (or, on H2, fails as a duplicate).
     */
    NativeStatement atomicInsert(String id, IdempotencyRecord r, Duration lockWait) {
        return null;
    }

    /**
     * The optimistic claim's one insert of a finished record, as {@link #atomicInsert} (which it is, unless a database has
     * a cheaper statement for it: the wait it bounds is rare and short here, for another call's row of the key shows up
     * only as that call's transaction ends).
     */
    NativeStatement finishedInsert(String id, IdempotencyRecord r, Duration lockWait) {
        return atomicInsert(id, r, lockWait);
    }

    /**
     * Whether, after the atomic insert met a committed row, a plain read finds it (H2 reads committed rows); else the row
     * is read with a lock, which sees its latest committed version whatever the transaction's snapshot.
     */
    boolean plainReadSeesCommittedRow() {
        return false;
    }

    /** The query of the database's time in epoch milliseconds; {@code null}: this database's time is not known. */
    String clockQuery() {
        return null;
    }

    /**
     * What a failed statement of a claim means here: {@link Claim.Busy} unsettled (a wait for another transaction gave
     * up), settled (the key was committed by another, or this transaction lost a deadlock), or {@code null} (neither).
     */
    abstract Claim.Busy busy(SQLException e);

    /** Whether the failure is this transaction losing to another one's commit of the same rows (a serialization failure). */
    abstract boolean lostToAnotherCommit(SQLException e);

    // ---------------------------------------------------------------------------------- reading a failure

    /**
     * A lock wait that timed out (not settled), or a duplicate key or deadlock (settled: retry in a new transaction), in
     * JPA's words or, deeper, in the database's ({@link #busy}).
     */
    final Claim.Busy busyIn(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof jakarta.persistence.LockTimeoutException || c instanceof jakarta.persistence.PessimisticLockException
                    || c instanceof jakarta.persistence.QueryTimeoutException) {
                // Look further for the database's words; default to a lock wait.
                Claim.Busy inner = c.getCause() == null ? null : busyIn(c.getCause());
                return inner != null ? inner : new Claim.Busy(false);
            }
            if (c instanceof java.sql.SQLException sql) {
                Claim.Busy busy = busy(sql);
                if (busy != null) {
                    return busy;
                }
            }
            if (c instanceof jakarta.persistence.EntityExistsException) {
                return new Claim.Busy(true);
            }
        }
        return null;
    }

    /** A serialization failure in the database's words ({@link #lostToAnotherCommit}), anywhere in the failure. */
    final boolean lostToAnotherCommitIn(Throwable failure) {
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

    // ------------------------------------------------------------------------------------------- shared helpers

    /**
     * A row's values in the order of its insert's ordinal parameters ({@link Shape}): the claim's thirteen, then the
     * request type when there is one, then a finished record's response and completion time.
     */
    static Object[] values(String id, IdempotencyRecord r) {
        Object[] v = {id, r.scopedKey().namespace(), r.scopedKey().principal(), r.scopedKey().key(), r.status().name(),
                r.fingerprint(), r.attempts(), r.firstSeen().toEpochMilli(), r.lastSeen().toEpochMilli(),
                r.expiresAt().toEpochMilli(), r.leaseUntil() == null ? null : r.leaseUntil().toEpochMilli(), r.owner(), r.version()};
        if (r.requestType() != null) {
            v = append(v, r.requestType());
        }
        if (r.isFinished()) {
            v = append(append(v, r.response()), r.completedAt().toEpochMilli());
        }
        return v;
    }

    /**
     * The columns one insert writes: an in-progress claim's, or a finished record's (the optimistic claim's one write),
     * each with or without a request type; one of four, so that each database's statements are built once.
     */
    enum Shape {
        CLAIM(false, false), TYPED_CLAIM(true, false), FINISHED(false, true), TYPED_FINISHED(true, true);

        final boolean typed;
        final boolean finished;

        Shape(boolean typed, boolean finished) {
            this.typed = typed;
            this.finished = finished;
        }

        static Shape of(IdempotencyRecord r) {
            boolean typed = r.requestType() != null;
            return r.isFinished() ? (typed ? TYPED_FINISHED : FINISHED) : (typed ? TYPED_CLAIM : CLAIM);
        }

        /** How many values it binds. */
        int count() {
            return 13 + (typed ? 1 : 0) + (finished ? 2 : 0);
        }

        String columns() {
            return COLUMNS + (typed ? ", request_type" : "") + (finished ? ", response, completed_at" : "");
        }

        /** Its values as plain placeholders. */
        String placeholders() {
            return VALUES + (typed ? ", ?14" : "") + (finished ? ", ?" + (count() - 1) + ", ?" + count() : "");
        }

        /** Its values as typed expressions ({@link #TYPED_VALUES}), the response cast to {@code binary}. */
        String typedValues(String binary) {
            return TYPED_VALUES + (typed ? ", CAST(?14 AS VARCHAR)" : "")
                    + (finished ? ", CAST(?" + (count() - 1) + " AS " + binary + "), CAST(?" + count() + " AS BIGINT)" : "");
        }
    }

    static Object[] append(Object[] values, Object last) {
        Object[] more = Arrays.copyOf(values, values.length + 1);
        more[values.length] = last;
        return more;
    }

    /** A wait as whole seconds, rounded up; zero stays zero. */
    static long wholeSeconds(Duration wait) {
        return wait.toSeconds() + (wait.toNanosPart() > 0 ? 1 : 0);
    }

    /** A wait as a JDBC query timeout: whole seconds, at least one (zero would be no limit). */
    static int queryTimeoutSeconds(Duration wait) {
        return (int) Math.max(1, wholeSeconds(wait));
    }

    static String state(SQLException e) {
        return e.getSQLState() == null ? "" : e.getSQLState();
    }

    /** A duplicate key: SQLState class 23 (integrity constraint violation), as every supported database reports it. */
    static boolean duplicate(SQLException e) {
        return state(e).startsWith("23");
    }

    /** {@link #busy} for a database whose lock wait gave up with {@code lockWait} and whose deadlock is {@link #lostToAnotherCommit}. */
    final Claim.Busy busy(SQLException e, boolean lockWaitGaveUp) {
        if (lockWaitGaveUp || e instanceof java.sql.SQLTimeoutException) {
            return new Claim.Busy(false);
        }
        if (duplicate(e) || lostToAnotherCommit(e)) {
            return new Claim.Busy(true);
        }
        return null;
    }

    /** The dialect of a database the store does not know: it recognises what every known one reports. */
    static final Dialect GENERIC = new Dialect() {
        private final Dialect[] known = {new PostgresDialect(), new MariaDbDialect(), new H2Dialect(), new DerbyDialect()};

        @Override
        Claim.Busy busy(SQLException e) {
            Claim.Busy settled = null;
            for (Dialect d : known) {
                Claim.Busy b = d.busy(e);
                if (b != null && !b.settled()) {
                    return b; // a wait that gave up, by any database's words
                }
                settled = settled == null ? b : settled;
            }
            return settled;
        }

        @Override
        boolean lostToAnotherCommit(SQLException e) {
            return Arrays.stream(known).anyMatch(d -> d.lostToAnotherCommit(e));
        }
    };
}
