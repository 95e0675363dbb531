package dev.idempotency.store.jpa;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of the store's native statements (written with JPA's ordinal parameters {@code ?1 ... ?n}) as plain JDBC:
 * the same SQL with {@code ?} markers, and which ordinal each marker takes. An ordinal may be used more than once
 * and in any order.
 */
record JdbcStatement(String sql, int[] ordinals) {

    private static final Pattern ORDINAL = Pattern.compile("\\?(\\d+)");

    static JdbcStatement of(String jpaSql) {
        Matcher m = ORDINAL.matcher(jpaSql);
        List<Integer> ordinals = new ArrayList<>();
        StringBuilder sql = new StringBuilder();
        while (m.find()) {
            ordinals.add(Integer.parseInt(m.group(1)));
            m.appendReplacement(sql, "?");
        }
        m.appendTail(sql);
        return new JdbcStatement(sql.toString(), ordinals.stream().mapToInt(Integer::intValue).toArray());
    }

    /** Binds {@code values[ordinal - 1]} to each marker. */
    void bind(PreparedStatement ps, Object... values) throws SQLException {
        for (int i = 0; i < ordinals.length; i++) {
            Object value = values[ordinals[i] - 1];
            if (value == null) {
                ps.setNull(i + 1, Types.NULL);
            } else {
                ps.setObject(i + 1, value);
            }
        }
    }
}
