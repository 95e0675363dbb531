package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One statement of the store as a {@link Dialect} writes it (SQL with JPA's ordinal parameters {@code ?1 ... ?n}, parsed
 * once for JDBC), with its values: sent in plain JDBC on the transaction's connection, or through the entity manager,
 * as the transaction decides.
 *
 * @param jdbc                 the SQL, and its markers' ordinals
 * @param values               {@code values[ordinal - 1]}
 * @param queryTimeoutSeconds  a JDBC query timeout (whole seconds), or 0 for none
 * @param countInFirstColumn   whether it is a query whose first column is the count of rows written (else an update)
 */
record NativeStatement(String jpaSql, JdbcStatement jdbc, Object[] values, int queryTimeoutSeconds, boolean countInFirstColumn) {

    /** The rows it wrote, in plain JDBC. */
    int executeOn(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(jdbc.sql())) {
            jdbc.bind(ps, values);
            if (queryTimeoutSeconds > 0) {
                ps.setQueryTimeout(queryTimeoutSeconds);
            }
            if (!countInFirstColumn) {
                return ps.executeUpdate();
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The rows it wrote, through the entity manager. */
    int executeOn(EntityManager em) {
        Query q = em.createNativeQuery(jpaSql);
        for (int i = 0; i < values.length; i++) {
            q.setParameter(i + 1, values[i]);
        }
        if (queryTimeoutSeconds > 0) {
            q.setHint("jakarta.persistence.query.timeout", queryTimeoutSeconds * 1000);
        }
        if (!countInFirstColumn) {
            return q.executeUpdate();
        }
        Object[] row = (Object[]) q.getSingleResult();
        return ((Number) row[0]).intValue();
    }
}
