package dev.idempotency.config;

import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Queue;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * Whether JSON-B can write a type and read it back as an equal object: concrete classes with a
 * way to construct them, the collection and map interfaces with concrete element types, arrays, records,
 * enums. Not: {@code Object}, raw or wildcard types, type variables, other interfaces and abstract classes
 * (streams, iterators, I/O).
 */
public final class StorableTypes {

    private static final Set<Class<?>> CONTAINER_INTERFACES = Set.of(Collection.class, List.class, Set.class,
            SortedSet.class, NavigableSet.class, Queue.class, Deque.class, Map.class, SortedMap.class, NavigableMap.class);

    private StorableTypes() {
    }

    /** Why the type cannot be stored, or {@code null} when it can. */
    public static String problem(Type type) {
        if (type instanceof Class<?> c) {
            return problem(c);
        }
        if (type instanceof ParameterizedType p) {
            Class<?> raw = (Class<?>) p.getRawType();
            if (!CONTAINER_INTERFACES.contains(raw)) {
                String rawProblem = problem(raw, true);
                if (rawProblem != null) {
                    return rawProblem;
                }
            }
            for (Type arg : p.getActualTypeArguments()) {
                String argProblem = problem(arg);
                if (argProblem != null) {
                    return argProblem;
                }
            }
            return null;
        }
        if (type instanceof GenericArrayType a) {
            return problem(a.getGenericComponentType());
        }
        if (type instanceof TypeVariable<?> v) {
            return "the type variable " + v.getName() + " does not say what to rebuild on replay";
        }
        if (type instanceof WildcardType w) {
            return "the wildcard " + w + " does not say what to rebuild on replay";
        }
        return "the type " + type + " is not supported";
    }

    private static String problem(Class<?> c) {
        return problem(c, false);
    }

    private static String problem(Class<?> c, boolean parameterized) {
        if (c.isPrimitive() || c == String.class || c.isEnum() || c.isRecord()) {
            return null;
        }
        if (c.isArray()) {
            return problem(c.getComponentType());
        }
        if (c == Object.class) {
            return "Object does not say what to rebuild on replay";
        }
        if (CONTAINER_INTERFACES.contains(c) || (!parameterized && c.getTypeParameters().length > 0 && !c.getName().startsWith("java.lang."))) {
            return "the raw type " + c.getName() + " does not say what its elements are; give its type arguments";
        }
        if (c.isInterface() || Modifier.isAbstract(c.getModifiers())) {
            if (Number.class == c) {
                return "Number does not say which number to rebuild on replay";
            }
            return c.getName() + " is " + (c.isInterface() ? "an interface" : "abstract") + ": JSON-B cannot rebuild it on replay";
        }
        if (c.getName().startsWith("java.") || c.getName().startsWith("javax.")) {
            return null; // JDK value types JSON-B supports (numbers, dates, UUID, URI, Optional...)
        }
        boolean constructible = false;
        for (var ctor : c.getDeclaredConstructors()) {
            if (ctor.getParameterCount() == 0 && !Modifier.isPrivate(ctor.getModifiers())) {
                constructible = true;
            }
            for (var a : ctor.getAnnotations()) {
                if (a.annotationType().getName().equals("jakarta.json.bind.annotation.JsonbCreator")) {
                    constructible = true;
                }
            }
        }
        for (var m : c.getDeclaredMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                for (var a : m.getAnnotations()) {
                    if (a.annotationType().getName().equals("jakarta.json.bind.annotation.JsonbCreator")) {
                        constructible = true;
                    }
                }
            }
        }
        if (!constructible) {
            return c.getName() + " has neither a non-private no-argument constructor nor a @JsonbCreator: JSON-B cannot rebuild it on replay";
        }
        if (c.isMemberClass() && !Modifier.isStatic(c.getModifiers())) {
            return c.getName() + " is an inner (non-static) class: JSON-B cannot rebuild it on replay";
        }
        return null;
    }
}
