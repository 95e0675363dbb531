package dev.idempotency.runtime;

import dev.idempotency.ForIdempotency;

import jakarta.enterprise.inject.Instance;

import javax.naming.InitialContext;
import javax.naming.NamingException;

/** Where the library finds what the application or the server supplies; {@code null} when there is none. */
public final class Lookups {

    private Lookups() {
    }

    /** Whether a class is on the library's class path (an optional API: MicroProfile Health, Metrics, OpenTelemetry). */
    public static boolean present(String className) {
        try {
            Class.forName(className, false, Lookups.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The application's bean of this type qualified {@code @ForIdempotency}, the one that wins over the library's. */
    public static <T> T qualified(Instance<Object> beans, Class<T> type) {
        return resolved(beans, type, ForIdempotency.Literal.INSTANCE);
    }

    /**
     * The one bean of this type with these qualifiers, else {@code null}: none, more than one, or a qualifier the
     * container does not know (a container that only knows the qualifiers it discovered refuses it).
     */
    public static <T> T resolved(Instance<Object> beans, Class<T> type, java.lang.annotation.Annotation... qualifiers) {
        try {
            Instance<T> i = beans.select(type, qualifiers);
            return i.isResolvable() ? i.get() : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Whether there is a JNDI naming context at all (every Jakarta EE server; not Java SE, Quarkus or Helidon), whatever
     * it holds.
     */
    public static boolean jndiPresent() {
        try {
            new InitialContext().lookup("java:comp/env");
            return true;
        } catch (javax.naming.NoInitialContextException e) {
            return false; // no naming service (Java SE, Helidon)
        } catch (NamingException | RuntimeException e) {
            // Quarkus's naming refuses every name and says how to enable it; anything else is a naming service that could
            // not answer here (a thread without a component context on GlassFish, say): JNDI is there
            return e.getMessage() == null || !e.getMessage().contains("quarkus.naming");
        }
    }

    /** A JNDI name's object of this type: {@code null} where there is no JNDI or no such name (Java SE, another server). */
    public static <T> T jndi(String jndiName, Class<T> type) {
        try {
            Object o = new InitialContext().lookup(jndiName);
            return type.isInstance(o) ? type.cast(o) : null;
        } catch (NamingException | RuntimeException e) {
            return null;
        }
    }
}
