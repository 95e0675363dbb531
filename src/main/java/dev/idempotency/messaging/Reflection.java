package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/** Reading a connector's types by reflection, so that the library depends on no broker's client. */
final class Reflection {

    private Reflection() {
    }

    /** The value of the first of the named no-argument methods the object has, or {@code null}. */
    static Object call(Object target, String... names) {
        try {
            for (String n : names) {
                Method m = publicMethod(target.getClass(), n);
                if (m != null) {
                    return m.invoke(target);
                }
            }
            return null;
        } catch (ReflectiveOperationException e) {
            throw new IdempotencyException("Could not read the record's " + names[0], e);
        }
    }

    /** The method as a public type declares it (an implementation class may be private), or {@code null}. */
    static Method publicMethod(Class<?> type, String name, Class<?>... parameters) {
        if (type == null) {
            return null;
        }
        if (Modifier.isPublic(type.getModifiers())) {
            try {
                return type.getMethod(name, parameters);
            } catch (NoSuchMethodException e) {
                // not here; an interface may still declare it
            }
        }
        for (Class<?> i : type.getInterfaces()) {
            Method m = publicMethod(i, name, parameters);
            if (m != null) {
                return m;
            }
        }
        return publicMethod(type.getSuperclass(), name, parameters);
    }
}
