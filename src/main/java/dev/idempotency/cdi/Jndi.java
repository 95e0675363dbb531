package dev.idempotency.cdi;

import javax.naming.InitialContext;
import javax.naming.NamingException;

/** JNDI look-ups that answer {@code null} where there is no JNDI or no such name (Java SE, another server). */
final class Jndi {

    private Jndi() {
    }

    static <T> T lookup(String jndiName, Class<T> type) {
        try {
            Object o = new InitialContext().lookup(jndiName);
            return type.isInstance(o) ? type.cast(o) : null;
        } catch (NamingException | RuntimeException e) {
            return null;
        }
    }
}
