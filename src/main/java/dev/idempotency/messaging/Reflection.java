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

    /** {@code target.name(argument)} for a method taking one string (a header's or a property's name), or {@code null}. */
    static Object callWith(Object target, String name, String argument) {
        try {
            Method m = publicMethod(target.getClass(), name, String.class);
            return m == null ? null : m.invoke(target, argument);
        } catch (ReflectiveOperationException e) {
            throw new IdempotencyException("Could not read the message's " + argument, e);
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

    /**
     * The connector's metadata of this type (by name: the connector may be absent) among a Reactive Messaging message's
     * metadata, or {@code null}: the argument is no message, or carries none of that type.
     */
    static Object metadata(Object argument, String typeName) {
        if (!(argument instanceof org.eclipse.microprofile.reactive.messaging.Message<?> message)) {
            return null;
        }
        Object metadata = call(message, "getMetadata");
        if (metadata instanceof Iterable<?> all) {
            for (Object m : all) {
                for (Class<?> c = m == null ? null : m.getClass(); c != null; c = c.getSuperclass()) {
                    if (c.getName().equals(typeName)) {
                        return m;
                    }
                }
            }
        }
        return null;
    }

    /** A header's or property's value as text: a string, bytes (UTF-8), or what else it is ({@code toString}). */
    static String text(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof byte[] bytes) {
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        }
        if (value instanceof CharSequence || value instanceof Number || value instanceof java.util.UUID
                || value.getClass().getName().equals("com.rabbitmq.client.LongString")
                || value.getClass().getName().startsWith("com.rabbitmq.client.impl.LongStringHelper")) {
            return value.toString(); // RabbitMQ's LongString is its UTF-8 text
        }
        return null; // a date, a map, a list: no text that is the same on every node
    }

    /** An {@code Optional}'s value, or {@code null}; anything else as it is. */
    static Object present(Object value) {
        return value instanceof java.util.Optional<?> o ? o.orElse(null) : value;
    }
}
