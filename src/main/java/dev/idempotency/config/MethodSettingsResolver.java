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
 * Resolves an {@code @Idempotent} method's settings at deployment (SPEC C2): for each member, the first of
 * {@code <fqcn>/<method>/Idempotent/<member>}, {@code <fqcn>/Idempotent/<member>},
 * {@code Idempotent/<member>}, the annotation's value, the global {@code idempotency.*} key. Every mistake
 * (I6) is reported with the method's name and the fix.
 */
public final class MethodSettingsResolver {

    /** The members that configuration may override. */
    public static final Set<String> MEMBERS = Set.of("enabled", "namespace", "required", "keepOn", "releaseOn",
            "onConcurrent", "waitTimeout", "ttl", "lease", "header", "keepStatus", "maxResponseSize", "failOpen", "messageProperty", "claim",
            "anonymous", "keyFrom", "keyFromHeader", "fingerprintFields");

    private static final String SEGMENT = "Idempotent/";

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
        String where = beanClass.getName() + "#" + method.getName();
        int before = errors.all().size();
        Lookup lookup = new Lookup(beanClass.getName(), method.getName(), where, errors);

        boolean enabled = lookup.get("enabled", null, v -> ConfigValues.bool(lookup.keyOf("enabled"), v), true);

        // Key source (I1, I6)
        int keyIndex = -1;
        Annotation[][] parameterAnnotations = method.getParameterAnnotations();
        for (int i = 0; i < parameterAnnotations.length; i++) {
            for (Annotation a : parameterAnnotations[i]) {
                if (a.annotationType() == IdempotencyKey.class) {
                    if (keyIndex >= 0) {
                        errors.add("@Idempotent method " + where + " has two @IdempotencyKey parameters (" + (keyIndex + 1)
                                + " and " + (i + 1) + "); mark exactly one parameter as the key");
                    } else {
                        keyIndex = i;
                    }
                }
            }
        }
        KeyInside keyInside = null;
        boolean resourceMethod = isResourceMethod(beanClass, method);
        if (!resourceMethod && !isOnMessage(method)) {
            // A key inside a parameter's type (I8): one level deep.
            Class<?>[] types = method.getParameterTypes();
            for (int i = 0; i < types.length; i++) {
                if (!inspectable(types[i])) {
                    continue;
                }
                List<String> problems = new ArrayList<>();
                List<KeyInside.Found> found = KeyInside.find(types[i], problems);
                for (String problem : problems) {
                    errors.add("@Idempotent method " + where + " takes a " + types[i].getName() + " (parameter " + (i + 1) + "), where "
                            + problem);
                }
                if (found.size() > 1) {
                    errors.add("@Idempotent method " + where + " takes a " + types[i].getName() + " (parameter " + (i + 1)
                            + ") with two @IdempotencyKey members (" + found.stream().map(KeyInside.Found::property)
                            .collect(Collectors.joining(" and ")) + "); mark exactly one as the key");
                    continue;
                }
                if (found.isEmpty()) {
                    continue;
                }
                KeyInside.Found key = found.get(0);
                String description = types[i].getSimpleName() + "." + key.property() + " (a " + key.kind() + " of parameter " + (i + 1) + ")";
                if (keyIndex >= 0) {
                    errors.add("@Idempotent method " + where + " has two keys: " + (keyInside != null ? keyInside.description()
                            : "its @IdempotencyKey parameter " + (keyIndex + 1)) + " and " + description
                            + "; mark exactly one as the key");
                    continue;
                }
                try {
                    key.member().setAccessible(true);
                } catch (RuntimeException e) {
                    errors.add("@Idempotent method " + where + " cannot read its key " + description + " (" + e.getMessage()
                            + "): make it public, or open its package to the library");
                    continue;
                }
                keyIndex = i;
                keyInside = new KeyInside((java.lang.reflect.Member) key.member(), KeyInside.jsonName(types[i], key), description);
            }
        }
        KeySource keySource;
        if (resourceMethod) {
            keySource = KeySource.HTTP_HEADER;
            if (keyIndex >= 0) {
                errors.add("@Idempotent method " + where + " is a JAX-RS resource method with an @IdempotencyKey parameter: "
                        + "its key is the request header (see header()); remove @IdempotencyKey");
            }
        } else if (keyIndex >= 0) {
            keySource = KeySource.PARAMETER;
        } else if (isOnMessage(method)) {
            keySource = KeySource.JMS_MESSAGE;
        } else {
            keySource = null;
            errors.add("@Idempotent method " + where + " has no key: mark the parameter that carries the client's key with "
                    + "@IdempotencyKey, or the record component, field or getter of a parameter's type that does "
                    + "(or make it a JAX-RS resource method, whose key is the Idempotency-Key header)");
        }

        String namespace = lookup.get("namespace", annotation.namespace().isEmpty() ? null : annotation.namespace(),
                String::strip, defaultNamespace(beanClass, method));
        if (namespace.isEmpty() || namespace.length() > ScopedKey.MAX_NAMESPACE) {
            errors.add("@Idempotent method " + where + " has namespace '" + namespace + "': it must be 1 to "
                    + ScopedKey.MAX_NAMESPACE + " characters");
        }
        boolean required = lookup.get("required", annotation.required() ? null : "false",
                v -> ConfigValues.bool(lookup.keyOf("required"), v), global.required());
        List<Class<? extends Throwable>> keepOn = lookup.get("keepOn", classNames(annotation.keepOn()),
                v -> throwables(lookup.keyOf("keepOn"), v, method), List.of());
        List<Class<? extends Throwable>> releaseOn = lookup.get("releaseOn", classNames(annotation.releaseOn()),
                v -> throwables(lookup.keyOf("releaseOn"), v, method), List.of());
        for (Class<? extends Throwable> kept : keepOn) {
            if (!canRebuild(kept)) {
                errors.add("@Idempotent method " + where + " keeps " + kept.getName() + ", which has no public constructor "
                        + "taking a String (or none): give it one, or remove it from keepOn");
            }
        }
        OnConcurrent onConcurrent = lookup.get("onConcurrent",
                annotation.onConcurrent() == OnConcurrent.DEFAULT ? null : annotation.onConcurrent().name(),
                v -> OnConcurrent.valueOf(ConfigValues.oneOf(lookup.keyOf("onConcurrent"), v, "reject", "wait").toUpperCase()),
                global.onConcurrent());
        Duration waitTimeout = lookup.get("waitTimeout", blankToNull(annotation.waitTimeout()),
                v -> ConfigValues.duration(lookup.keyOf("waitTimeout"), v, true), global.waitTimeout());
        Duration ttl = lookup.get("ttl", blankToNull(annotation.ttl()),
                v -> ConfigValues.duration(lookup.keyOf("ttl"), v, false), global.ttl());
        Duration lease = lookup.get("lease", blankToNull(annotation.lease()),
                v -> ConfigValues.duration(lookup.keyOf("lease"), v, false), global.lease());
        if (ttl != null && lease != null && ttl.compareTo(lease) < 0) {
            errors.add("@Idempotent method " + where + " keeps its records for " + ttl + " (ttl), less than its lease of " + lease
                    + ": a running call's record would expire while it runs, and a retry would run it again; make ttl at least"
                    + " the lease (" + lookup.keyOf("ttl") + " or idempotency.ttl, " + lookup.keyOf("lease") + " or idempotency.lease)");
        }

        String header = lookup.get("header", blankToNull(annotation.header()),
                v -> ConfigValues.headerName(lookup.keyOf("header"), v), global.header());
        StatusSet keepStatus = lookup.get("keepStatus", blankToNull(annotation.keepStatus()),
                v -> StatusSet.parse(lookup.keyOf("keepStatus"), v), global.keepStatus());
        long maxResponseSize = lookup.get("maxResponseSize", annotation.maxResponseSize() < 0 ? null : String.valueOf(annotation.maxResponseSize()),
                v -> (long) ConfigValues.integer(lookup.keyOf("maxResponseSize"), v, 0, 16_777_216), global.maxResponseSize());
        boolean failOpen = lookup.get("failOpen", annotation.failOpen() ? "true" : null,
                v -> ConfigValues.bool(lookup.keyOf("failOpen"), v), global.failOpen());
        AnonymousPolicy anonymous = lookup.get("anonymous", blankToNull(annotation.anonymous()),
                v -> AnonymousPolicy.parse(lookup.keyOf("anonymous"), v), global.anonymous());
        String keyFrom = lookup.get("keyFrom", blankToNull(annotation.keyFrom()),
                v -> jsonPointer(lookup.keyOf("keyFrom"), v.strip()), "");
        boolean keyFromHeader = lookup.get("keyFromHeader", annotation.keyFromHeader() ? null : "false",
                v -> ConfigValues.bool(lookup.keyOf("keyFromHeader"), v), true);
        List<String> fingerprintFields = lookup.get("fingerprintFields",
                annotation.fingerprintFields().length == 0 ? null : String.join(",", annotation.fingerprintFields()),
                v -> {
                    List<String> out = new ArrayList<>();
                    for (String f : v.split(",")) {
                        if (!f.isBlank()) {
                            out.add(jsonPointer(lookup.keyOf("fingerprintFields"), f.strip()));
                        }
                    }
                    return List.copyOf(out);
                }, List.of());
        boolean bodyOptions = !keyFrom.isEmpty() || !keyFromHeader || !fingerprintFields.isEmpty();
        if (bodyOptions && keySource != KeySource.HTTP_HEADER && keySource != null) {
            errors.add("@Idempotent method " + where + " names keyFrom, keyFromHeader or fingerprintFields, which are for JAX-RS "
                    + "resource methods (a JSON request body); remove them, or mark the key with @IdempotencyKey");
        }
        if (!keyFromHeader && keyFrom.isEmpty()) {
            errors.add("@Idempotent method " + where + " has keyFromHeader = false and no keyFrom: its requests have no key; "
                    + "name the body field with the key (keyFrom = \"/orderId\"), or take the header");
        }
        if (keySource == KeySource.HTTP_HEADER && anonymous.mode() == AnonymousPolicy.Mode.HEADER && !global.scopeByPrincipal()) {
            errors.add("@Idempotent method " + where + " scopes anonymous keys by the header " + anonymous.header()
                    + " (anonymous=" + anonymous + "), but idempotency.scope-by-principal=false shares every key among all"
                    + " callers: set idempotency.scope-by-principal=true, or anonymous to allow or reject");
        }

        String messageProperty = lookup.get("messageProperty", blankToNull(annotation.messageProperty()), v -> {
            String p = v.strip();
            if (p.isEmpty() || !Character.isJavaIdentifierStart(p.charAt(0)) || !p.chars().allMatch(Character::isJavaIdentifierPart)) {
                throw new IllegalArgumentException(lookup.keyOf("messageProperty") + "=" + v + " is not a JMS property name");
            }
            return p;
        }, null);
        if (messageProperty != null && keySource != KeySource.JMS_MESSAGE && keySource != null) {
            errors.add("@Idempotent method " + where + " names a messageProperty but is not onMessage(jakarta.jms.Message); "
                    + "remove messageProperty");
        }

        ClaimMode claim = lookup.get("claim", annotation.claim() == ClaimMode.DEFAULT ? null : annotation.claim().name(),
                v -> GlobalSettings.claimMode(lookup.keyOf("claim"), v), global.claim());

        // What is stored (I2, I4)
        Type returnType = method.getGenericReturnType();
        boolean async = CompletionStage.class.isAssignableFrom(method.getReturnType());
        Type valueType = returnType;
        if (async) {
            valueType = returnType instanceof ParameterizedType p ? p.getActualTypeArguments()[0] : Object.class;
            if (!method.getReturnType().isAssignableFrom(java.util.concurrent.CompletableFuture.class)) {
                errors.add("@Idempotent method " + where + " returns " + method.getReturnType().getName()
                        + ": return CompletionStage or CompletableFuture, which a replay can rebuild");
            }
        }
        boolean voidResult = valueType == void.class || valueType == Void.class;
        if (!voidResult && keySource != KeySource.HTTP_HEADER) {
            String problem = StorableTypes.problem(valueType);
            if (problem != null) {
                errors.add("@Idempotent method " + where + " returns " + returnType.getTypeName() + ", which cannot be stored: "
                        + problem + ". Return a concrete type (a record, a class with a no-argument constructor, a List<T> of one)");
            }
        }
        if (keySource == KeySource.PARAMETER) {
            Type[] params = method.getGenericParameterTypes();
            for (int i = 0; i < params.length; i++) {
                if (i != keyIndex && isUnfingerprintable(params[i])) {
                    errors.add("@Idempotent method " + where + " takes a " + params[i].getTypeName() + " (parameter " + (i + 1)
                            + "), which cannot be fingerprinted: pass the data itself (a String, byte[], or a value object)");
                }
            }
        }
        // A JAX-RS method that suspends its response (@Suspended AsyncResponse) answers on another thread, after the
        // request's thread has gone on to other requests: no transaction begun on that thread may wait for it.
        boolean suspends = java.util.Arrays.stream(method.getParameterAnnotations()).flatMap(java.util.Arrays::stream)
                .anyMatch(a -> a.annotationType().getName().equals("jakarta.ws.rs.container.Suspended"));
        if (suspends && claim == ClaimMode.ATOMIC) {
            errors.add("@Idempotent method " + where + " suspends its response (@Suspended) and asks for claim ATOMIC: its "
                    + "answer comes after the request's transaction must end. Use claim = ClaimMode.LEASED (or leave claim to its default)");
        } else if (suspends) {
            claim = ClaimMode.LEASED;
        }
        if (async && claim == ClaimMode.ATOMIC) {
            errors.add("@Idempotent method " + where + " returns a CompletionStage and asks for claim ATOMIC: its work ends "
                    + "after the transaction could commit. Use claim = ClaimMode.LEASED (or leave claim to its default)");
        }
        if (Modifier.isStatic(method.getModifiers()) || Modifier.isPrivate(method.getModifiers())) {
            errors.add("@Idempotent method " + where + " is static or private, so no interceptor can run: make it a public "
                    + "business method");
        }
        if (errors.all().size() > before) {
            return Optional.empty();
        }
        return Optional.of(new MethodSettings(method, enabled, namespace, required, keySource, keyIndex, keyInside, keepOn, releaseOn,
                new Policy(ttl, lease, onConcurrent == OnConcurrent.WAIT, waitTimeout, global.claimLockTimeout()), valueType, async, voidResult,
                new HttpOptions(header, keepStatus, maxResponseSize, failOpen, anonymous, keyFrom,
                        keyFromHeader, fingerprintFields), messageProperty, claim));
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

    private static boolean hasHttpMethod(Method method) {
        for (Annotation a : method.getAnnotations()) {
            for (Annotation meta : a.annotationType().getAnnotations()) {
                if (meta.annotationType().getName().equals("jakarta.ws.rs.HttpMethod")) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean isOnMessage(Method method) {
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

    private static boolean isUnfingerprintable(Type type) {
        Class<?> raw = type instanceof Class<?> c ? c : type instanceof ParameterizedType p ? (Class<?>) p.getRawType() : null;
        if (raw == null) {
            return false;
        }
        return java.io.InputStream.class.isAssignableFrom(raw) || java.io.Reader.class.isAssignableFrom(raw)
                || java.util.stream.BaseStream.class.isAssignableFrom(raw) || java.util.Iterator.class.isAssignableFrom(raw)
                || java.util.concurrent.Future.class.isAssignableFrom(raw) || CompletionStage.class.isAssignableFrom(raw);
    }

    private static boolean canRebuild(Class<? extends Throwable> type) {
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

    private static String classNames(Class<?>[] classes) {
        return classes.length == 0 ? null : Arrays.stream(classes).map(Class::getName).collect(Collectors.joining(","));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    @SuppressWarnings("unchecked")
    private static List<Class<? extends Throwable>> throwables(String key, String value, Method method) {
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

    private final class Lookup {
        private final String fqcn;
        private final String methodName;
        private final String where;
        private final ConfigErrors errors;

        Lookup(String fqcn, String methodName, String where, ConfigErrors errors) {
            this.fqcn = fqcn;
            this.methodName = methodName;
            this.where = where;
            this.errors = errors;
        }

        /** The most specific key set for the member, or the annotation's form when none is. */
        String keyOf(String member) {
            for (String key : keys(member)) {
                if (config.getOptionalValue(key, String.class).isPresent()) {
                    return key;
                }
            }
            return "@Idempotent(" + member + ") on " + where;
        }

        List<String> keys(String member) {
            return List.of(fqcn + "/" + methodName + "/" + SEGMENT + member, fqcn + "/" + SEGMENT + member, SEGMENT + member);
        }

        <T> T get(String member, String annotationValue, Function<String, T> parse, T fallback) {
            String raw = null;
            for (String key : keys(member)) {
                Optional<String> v = config.getOptionalValue(key, String.class);
                if (v.isPresent()) {
                    raw = v.get();
                    break;
                }
            }
            if (raw == null) {
                raw = annotationValue;
            }
            if (raw == null) {
                return fallback;
            }
            try {
                return parse.apply(raw);
            } catch (IllegalArgumentException e) {
                errors.add("@Idempotent method " + where + ": " + e.getMessage());
                return fallback;
            }
        }
    }
}
