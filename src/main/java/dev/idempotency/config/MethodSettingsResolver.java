package dev.idempotency.config;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.OnConcurrent;
import dev.idempotency.ClaimMode;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.ScopedKey;

import org.eclipse.microprofile.config.Config;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Resolves an {@code @Idempotent} method's settings at deployment, the MicroProfile Fault Tolerance way: for each
 * member, the first of {@code <fqcn>/<method>/Idempotent/<member>}, {@code <fqcn>/Idempotent/<member>},
 * {@code Idempotent/<member>}, the annotation's value, the global {@code idempotency.*} key. Every mistake (no key
 * source, two key parameters, a result that cannot be stored, a bad value) is reported with the method's name and
 * the fix.
 */
public final class MethodSettingsResolver {

    /** The members that configuration may override. */
    public static final Set<String> MEMBERS = Set.of("enabled", "namespace", "required", "keepOn", "releaseOn",
            "onConcurrent", "waitTimeout", "ttl", "lease", "header", "keepStatus", "maxResponseSize", "maxRequestSize", "failOpen", "messageProperty", "claim", "keptFailures",
            "anonymous", "keyFrom", "keyFromHeader", "fingerprintFields", "expiryHeader");

    static final String SEGMENT = "Idempotent/";

    private final Config config;
    private final GlobalSettings global;

    public MethodSettingsResolver(Config config, GlobalSettings global) {
        this.config = config;
        this.global = global;
    }

    /** Reports configuration keys of the per-method grammar whose member is unknown. */
    public void checkMemberKeys(ConfigErrors errors) {
        for (String name : GlobalSettings.typedNames(config)) {
            int at = name.startsWith(SEGMENT) ? 0 : name.indexOf("/" + SEGMENT);
            if (at < 0) {
                continue;
            }
            String member = name.substring(name.indexOf(SEGMENT, at) + SEGMENT.length());
            if (!MEMBERS.contains(member)) {
                errors.add("Unknown configuration key " + name + ": Idempotent has no member '" + member
                        + "'; the members are " + String.join(", ", new java.util.TreeSet<>(MEMBERS)));
            }
        }
    }

    /**
     * Resolves one method.
     *
     * @param beanClass  the bean class (names the class level of the configuration grammar)
     * @param method     the business method
     * @param annotation the {@code @Idempotent} on the method, or else on the class
     * @param errors     where mistakes go
     * @return the settings, or empty when there were mistakes
     */
    public Optional<MethodSettings> resolve(Class<?> beanClass, Method method, Idempotent annotation, ConfigErrors errors) {
        return new MethodResolution(config, global, beanClass, method, annotation, errors).resolve();
    }

    /** {@code <fqcn>#<method>(<simple parameter types>)}, shortened with a hash when over 200 characters. */
    static String defaultNamespace(Class<?> beanClass, Method method) {
        String full = beanClass.getName() + "#" + method.getName() + Arrays.stream(method.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(",", "(", ")"));
        if (full.length() <= ScopedKey.MAX_NAMESPACE) {
            return full;
        }
        String hash = Integer.toHexString(full.hashCode());
        return full.substring(0, ScopedKey.MAX_NAMESPACE - hash.length() - 1) + "~" + hash;
    }

    /** A method with an HTTP method designator ({@code @GET}, {@code @POST}...), possibly inherited from an interface. */
    public static boolean isResourceMethod(Class<?> beanClass, Method method) {
        if (hasHttpMethod(method)) {
            return true;
        }
        for (Class<?> c = method.getDeclaringClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                try {
                    if (hasHttpMethod(i.getMethod(method.getName(), method.getParameterTypes()))) {
                        return true;
                    }
                } catch (NoSuchMethodException e) {
                    // not declared there
                }
            }
        }
        return false;
    }

    static boolean hasHttpMethod(Method method) {
        for (Annotation a : method.getAnnotations()) {
            for (Annotation meta : a.annotationType().getAnnotations()) {
                if (meta.annotationType().getName().equals("jakarta.ws.rs.HttpMethod")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** An {@code @Incoming} method of MicroProfile Reactive Messaging (read by name: the API may be absent). */
    static boolean isIncoming(Method method) {
        for (Annotation a : method.getAnnotations()) {
            if (a.annotationType().getName().equals(INCOMING)) {
                return true;
            }
        }
        return false;
    }

    static final String INCOMING = "org.eclipse.microprofile.reactive.messaging.Incoming";

    /** The channel an {@code @Incoming} method consumes (the first, where it names several), or {@code null}. */
    static String incomingChannel(Method method) {
        for (Annotation a : method.getAnnotations()) {
            if (a.annotationType().getName().equals(INCOMING)) {
                try {
                    Object value = a.annotationType().getMethod("value").invoke(a);
                    if (value instanceof String s) {
                        return s;
                    }
                    if (value instanceof String[] all && all.length > 0) {
                        return all[0];
                    }
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return null;
                }
            }
        }
        return null;
    }

    static boolean isOnMessage(Method method) {
        return method.getName().equals("onMessage") && method.getParameterCount() == 1
                && method.getParameterTypes()[0].getName().equals("jakarta.jms.Message");
    }

    /** A JSON Pointer (RFC 6901) to a field: {@code /orderId}, {@code /order/id}, {@code /items/0/sku}. */
    static String jsonPointer(String key, String value) {
        if (!value.matches("(/([^~/]|~[01])*)+")) {
            throw new IllegalArgumentException(key + "=" + value + " is not a JSON Pointer to a field (RFC 6901: /orderId, "
                    + "/order/id; ~0 for ~ and ~1 for / in a name)");
        }
        return value;
    }

    /** A parameter type that may carry a key inside: the application's own classes, not the JDK's, arrays or primitives. */
    static boolean inspectable(Class<?> type) {
        if (type.isPrimitive() || type.isArray() || type.isEnum()) {
            return false;
        }
        String name = type.getName();
        return !(name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jakarta."));
    }

    static boolean isUnfingerprintable(Type type) {
        Class<?> raw = type instanceof Class<?> c ? c : type instanceof ParameterizedType p ? (Class<?>) p.getRawType() : null;
        if (raw == null) {
            return false;
        }
        return java.io.InputStream.class.isAssignableFrom(raw) || java.io.Reader.class.isAssignableFrom(raw)
                || java.util.stream.BaseStream.class.isAssignableFrom(raw) || java.util.Iterator.class.isAssignableFrom(raw)
                || java.util.concurrent.Future.class.isAssignableFrom(raw) || CompletionStage.class.isAssignableFrom(raw);
    }

    static boolean canRebuild(Class<? extends Throwable> type) {
        if (Modifier.isAbstract(type.getModifiers())) {
            return false;
        }
        for (var c : type.getConstructors()) {
            if (c.getParameterCount() == 0 || (c.getParameterCount() == 1 && c.getParameterTypes()[0] == String.class)) {
                return true;
            }
        }
        return false;
    }

    static String classNames(Class<?>[] classes) {
        return classes.length == 0 ? null : Arrays.stream(classes).map(Class::getName).collect(Collectors.joining(","));
    }

    static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    @SuppressWarnings("unchecked")
    static List<Class<? extends Throwable>> throwables(String key, String value, Method method) {
        List<Class<? extends Throwable>> out = new ArrayList<>();
        for (String name : value.split(",")) {
            String n = name.strip();
            if (n.isEmpty()) {
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(n, false, method.getDeclaringClass().getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalArgumentException(key + " names " + n + ", which is not a class visible to " + method.getDeclaringClass().getName());
            }
            if (!Throwable.class.isAssignableFrom(c)) {
                throw new IllegalArgumentException(key + " names " + n + ", which is not an exception type");
            }
            out.add((Class<? extends Throwable>) c);
        }
        return List.copyOf(out);
    }
}
