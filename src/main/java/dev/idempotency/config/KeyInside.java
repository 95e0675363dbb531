package dev.idempotency.config;

import dev.idempotency.IdempotencyKey;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A key inside an argument: the record component, field or getter of a parameter's type marked
 * {@link IdempotencyKey}, one level deep. Found once, at deployment; read on every call.
 *
 * @param member      the field or the accessor that yields the key
 * @param property    the member's JSON-B property name, left out of the argument's fingerprint
 * @param description for messages: {@code CreateOrder.orderId (a record component of parameter 1)}
 */
public record KeyInside(Member member, String property, String description) {

    /** The key in {@code argument}, or {@code null} when the argument or its key is {@code null}. */
    public Object read(Object argument) {
        if (argument == null) {
            return null;
        }
        try {
            return member instanceof Field f ? f.get(argument) : ((Method) member).invoke(argument);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read " + description, e);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException("Reading " + description + " failed", cause);
        }
    }

    /** A member of a type marked {@code @IdempotencyKey}, as found. */
    record Found(String property, AccessibleObject member, String kind) {
    }

    /**
     * The members of {@code type} marked {@code @IdempotencyKey}: a record's components (the annotation reaches the
     * component, its field and its accessor: one member), else its fields and getters and those of its superclasses
     * and interfaces; a field and the getter of the same property are one member. Mistakes go to {@code problems}.
     */
    static List<Found> find(Class<?> type, List<String> problems) {
        Map<String, Found> byProperty = new LinkedHashMap<>();
        if (type.isRecord()) {
            for (RecordComponent rc : type.getRecordComponents()) {
                if (rc.isAnnotationPresent(IdempotencyKey.class) || rc.getAccessor().isAnnotationPresent(IdempotencyKey.class)) {
                    byProperty.putIfAbsent(rc.getName(), new Found(rc.getName(), rc.getAccessor(), "record component"));
                }
            }
            return new ArrayList<>(byProperty.values());
        }
        List<Class<?>> types = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            types.add(c);
            for (Class<?> i : c.getInterfaces()) {
                types.add(i);
            }
        }
        for (Class<?> c : types) {
            for (Field f : c.getDeclaredFields()) {
                if (!f.isAnnotationPresent(IdempotencyKey.class)) {
                    continue;
                }
                if (Modifier.isStatic(f.getModifiers())) {
                    problems.add("the static field " + c.getName() + "." + f.getName() + " is marked @IdempotencyKey: mark an "
                            + "instance field, record component or getter");
                    continue;
                }
                byProperty.putIfAbsent(f.getName(), new Found(f.getName(), f, "field"));
            }
            for (Method m : c.getDeclaredMethods()) {
                if (!m.isAnnotationPresent(IdempotencyKey.class) || m.isBridge() || m.isSynthetic()) {
                    continue;
                }
                if (Modifier.isStatic(m.getModifiers()) || m.getParameterCount() > 0 || m.getReturnType() == void.class) {
                    problems.add("the method " + c.getName() + "." + m.getName() + " is marked @IdempotencyKey but is not a "
                            + "getter (an instance method without parameters that returns the key)");
                    continue;
                }
                String property = propertyOf(m.getName());
                Found previous = byProperty.get(property);
                if (previous == null || previous.member() instanceof Field) {
                    byProperty.put(property, new Found(property, m, "getter")); // a getter reads a field's subclass override too
                }
            }
        }
        return new ArrayList<>(byProperty.values());
    }

    /** {@code getOrderId} and {@code isUrgent} name the properties {@code orderId} and {@code urgent}; others themselves. */
    static String propertyOf(String method) {
        for (String prefix : new String[] {"get", "is"}) {
            if (method.length() > prefix.length() && method.startsWith(prefix) && Character.isUpperCase(method.charAt(prefix.length()))) {
                String rest = method.substring(prefix.length());
                return rest.length() > 1 && Character.isUpperCase(rest.charAt(1)) ? rest
                        : rest.substring(0, 1).toLowerCase(Locale.ROOT) + rest.substring(1);
            }
        }
        return method;
    }

    /** The JSON-B name of the property: a {@code @JsonbProperty} on the member (or the record's field), else its own. */
    static String jsonName(Class<?> type, Found found) {
        List<AccessibleObject> carriers = new ArrayList<>(List.of(found.member()));
        try {
            carriers.add(type.getDeclaredField(found.property()));
        } catch (NoSuchFieldException e) {
            // a getter without a field of its name
        }
        for (AccessibleObject a : carriers) {
            jakarta.json.bind.annotation.JsonbProperty p = a.getAnnotation(jakarta.json.bind.annotation.JsonbProperty.class);
            if (p != null && !p.value().isEmpty()) {
                return p.value();
            }
        }
        return found.property();
    }
}
