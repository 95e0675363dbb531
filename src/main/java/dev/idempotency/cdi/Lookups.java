package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;

import jakarta.enterprise.inject.Instance;

import javax.naming.InitialContext;
import javax.naming.NamingException;

/** Where the library finds what the application or the server supplies; {@code null} when there is none. */
final class Lookups {

    private Lookups() {
    }

    /** The application's bean of this type qualified {@code @ForIdempotency}, the one that wins over the library's. */
    static <T> T qualified(Instance<Object> beans, Class<T> type) {
        Instance<T> i = beans.select(type, ForIdempotency.Literal.INSTANCE);
        return i.isResolvable() ? i.get() : null;
    }

    /** A JNDI name's object of this type: {@code null} where there is no JNDI or no such name (Java SE, another server). */
    static <T> T jndi(String jndiName, Class<T> type) {
        try {
            Object o = new InitialContext().lookup(jndiName);
            return type.isInstance(o) ? type.cast(o) : null;
        } catch (NamingException | RuntimeException e) {
            return null;
        }
    }
}
