package dev.idempotency.fuzz;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The parsers are package-private in their own packages (cache, jaxrs, config); the fuzz tests live together in
 * {@code dev.idempotency.fuzz}, so they reach them by reflection. {@link #call} rethrows what the parser threw, as it
 * threw it: a contract is about the parser's own exceptions, never about {@link InvocationTargetException}.
 */
final class Internals {

    /**
     * How long one {@code JAZZER_FUZZ=1} run fuzzes its target. Jazzer 0.24 takes the time only from
     * {@code @FuzzTest(maxDuration)} (no system property overrides it): to fuzz longer, change it here.
     */
    static final String MAX_DURATION = "2m";

    private Internals() {
    }

    static Class<?> type(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    static Method method(Class<?> owner, String name, Class<?>... parameters) {
        try {
            Method m = owner.getDeclaredMethod(name, parameters);
            m.setAccessible(true);
            return m;
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    static Constructor<?> constructor(Class<?> owner, Class<?>... parameters) {
        try {
            Constructor<?> c = owner.getDeclaredConstructor(parameters);
            c.setAccessible(true);
            return c;
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    static void set(Object target, String field, Object value) {
        try {
            Field f = target.getClass().getDeclaredField(field);
            f.setAccessible(true);
            f.set(target, value);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T call(Method m, Object target, Object... args) {
        try {
            return (T) m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw sneaky(e.getCause());
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T create(Constructor<?> c, Object... args) {
        try {
            return (T) c.newInstance(args);
        } catch (InvocationTargetException e) {
            throw sneaky(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
