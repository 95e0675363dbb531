package dev.idempotency.config;

import dev.idempotency.ClaimMode;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Idempotent;
import dev.idempotency.OnConcurrent;
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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.stream.Collectors;

import static dev.idempotency.config.MethodSettingsResolver.blankToNull;
import static dev.idempotency.config.MethodSettingsResolver.canRebuild;
import static dev.idempotency.config.MethodSettingsResolver.classNames;
import static dev.idempotency.config.MethodSettingsResolver.defaultNamespace;
import static dev.idempotency.config.MethodSettingsResolver.inspectable;
import static dev.idempotency.config.MethodSettingsResolver.isIncoming;
import static dev.idempotency.config.MethodSettingsResolver.isOnMessage;
import static dev.idempotency.config.MethodSettingsResolver.isResourceMethod;
import static dev.idempotency.config.MethodSettingsResolver.isUnfingerprintable;
import static dev.idempotency.config.MethodSettingsResolver.jsonPointer;
import static dev.idempotency.config.MethodSettingsResolver.throwables;

/**
 * One {@code @Idempotent} method's resolution ({@link MethodSettingsResolver#resolve}), in steps: finding the key's
 * source, reading the members (each from the most specific configuration key, else the annotation, else the global
 * setting), cross-checking them, and checking what is stored. Every mistake names the method and the fix. Each step
 * reads members or checks them, and reports to {@code problems}.
 *
 * <p>Over 400 lines on purpose: the steps of one method's resolution fill and cross-check the same members, one method
 * per step; most of its length is the error messages that name the method and the fix.
 */
final class MethodResolution {

    private final Config config;
    private final GlobalSettings global;
    private final Class<?> beanClass;
    private final Method method;
    private final Idempotent annotation;
    private final ConfigErrors errors;
    private final String where;
    private final MethodProblems problems;
    private final Lookup lookup;

    private boolean enabled;
    private int keyIndex;
    private KeyInside keyInside;
    private boolean resourceMethod;
    private KeySource keySource;
    private String namespace;
    private boolean required;
    private List<Class<? extends Throwable>> keepOn;
    private List<Class<? extends Throwable>> releaseOn;
    private OnConcurrent onConcurrent;
    private Duration waitTimeout;
    private Duration ttl;
    private Duration lease;
    private String header;
    private StatusSet keepStatus;
    private long maxResponseSize;
    private long maxRequestSize;
    private boolean failOpen;
    private AnonymousPolicy anonymous;
    private String keyFrom;
    private boolean keyFromHeader;
    private List<String> fingerprintFields;
    private String expiryHeader;
    private String messageProperty;
    private ClaimMode claim;
    private Type returnType;
    private boolean async;
    private Type valueType;
    private boolean voidResult;
    private boolean incomingMethod;
    private MethodSettings.Incoming incoming;

    MethodResolution(Config config, GlobalSettings global, Class<?> beanClass, Method method, Idempotent annotation,
                     ConfigErrors errors) {
        this.config = config;
        this.global = global;
        this.beanClass = beanClass;
        this.method = method;
        this.annotation = annotation;
        this.errors = errors;
        this.where = beanClass.getName() + "#" + method.getName();
        this.problems = new MethodProblems(where, errors);
        this.lookup = new Lookup(beanClass.getName(), method.getName(), problems);
    }

    Optional<MethodSettings> resolve() {
        int before = errors.all().size();
        enabled = lookup.get("enabled", null, v -> ConfigValues.bool(lookup.keyOf("enabled"), v), true);
        findKey();
        readBehaviour();
        readHttp();
        readMessaging();
        checkIncoming();
        readClaim();
        checkStorable();
        checkClaim();
        if (errors.all().size() > before) {
            return Optional.empty();
        }
        return Optional.of(new MethodSettings(method, enabled, namespace, required, keySource, keyIndex, keyInside, keepOn, releaseOn,
                new Policy(ttl, lease, onConcurrent == OnConcurrent.WAIT, waitTimeout, global.claimLockTimeout()), valueType, async, voidResult,
                new HttpOptions(header, keepStatus, maxResponseSize, maxRequestSize, failOpen, anonymous, keyFrom,
                        keyFromHeader, fingerprintFields, expiryHeader), messageProperty, claim, incoming));
    }

    /** The key's source: the Idempotency-Key header (a resource method), an @IdempotencyKey parameter, a key inside a parameter's type, or the JMS message (onMessage). */
    private void findKey() {
        keyIndex = -1;
        Annotation[][] parameterAnnotations = method.getParameterAnnotations();
        for (int i = 0; i < parameterAnnotations.length; i++) {
            for (Annotation a : parameterAnnotations[i]) {
                if (a.annotationType() == IdempotencyKey.class) {
                    if (keyIndex >= 0) {
                        problems.add(" has two @IdempotencyKey parameters (" + (keyIndex + 1)
                                + " and " + (i + 1) + "); mark exactly one parameter as the key");
                    } else {
                        keyIndex = i;
                    }
                }
            }
        }
        keyInside = null;
        resourceMethod = isResourceMethod(beanClass, method);
        incomingMethod = !resourceMethod && isIncoming(method);
        if (!resourceMethod && !isOnMessage(method)) {
            // A key inside a parameter's type: one level deep.
            Class<?>[] types = method.getParameterTypes();
            for (int i = 0; i < types.length; i++) {
                if (!inspectable(types[i])) {
                    continue;
                }
                List<String> insideProblems = new ArrayList<>();
                List<KeyInside.Found> found = KeyInside.find(types[i], insideProblems);
                for (String problem : insideProblems) {
                    problems.add(" takes a " + types[i].getName() + " (parameter " + (i + 1) + "), where "
                            + problem);
                }
                if (found.size() > 1) {
                    problems.add(" takes a " + types[i].getName() + " (parameter " + (i + 1)
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
                    problems.add(" has two keys: " + (keyInside != null ? keyInside.description()
                            : "its @IdempotencyKey parameter " + (keyIndex + 1)) + " and " + description
                            + "; mark exactly one as the key");
                    continue;
                }
                try {
                    key.member().setAccessible(true);
                } catch (RuntimeException e) {
                    problems.add(" cannot read its key " + description + " (" + e.getMessage()
                            + "): make it public, or open its package to the library");
                    continue;
                }
                keyIndex = i;
                keyInside = new KeyInside((java.lang.reflect.Member) key.member(), KeyInside.jsonName(types[i], key), description);
            }
        }
        if (resourceMethod) {
            keySource = KeySource.HTTP_HEADER;
            if (keyIndex >= 0) {
                problems.add(" is a JAX-RS resource method with an @IdempotencyKey parameter: "
                        + "its key is the request header (see header()); remove @IdempotencyKey");
            }
        } else if (keyIndex >= 0) {
            keySource = KeySource.PARAMETER;
        } else if (isOnMessage(method)) {
            keySource = KeySource.JMS_MESSAGE;
        } else if (incomingMethod && method.getParameterCount() == 1 && (takes(MESSAGE) || takes(CONSUMER_RECORD))) {
            keySource = KeySource.RECORD;
        } else if (incomingMethod) {
            keySource = null;
            problems.add(" is an @Incoming method whose payload carries no key: take the Message<T> (the key is the "
                    + "message's header named by messageProperty, else a Kafka record's topic, partition and offset, or a "
                    + "RabbitMQ or AMQP 1.0 message's message-id) or Kafka's ConsumerRecord<K, V>, or mark the key inside "
                    + "the payload's type with @IdempotencyKey");
        } else {
            keySource = null;
            problems.add(" has no key: mark the parameter that carries the client's key with "
                    + "@IdempotencyKey, or the record component, field or getter of a parameter's type that does "
                    + "(or make it a JAX-RS resource method, whose key is the Idempotency-Key header)");
        }
    }

    /** The members that shape every call: namespace, required, keepOn and releaseOn, concurrency, ttl and lease. */
    private void readBehaviour() {
        namespace = lookup.get("namespace", annotation.namespace().isEmpty() ? null : annotation.namespace(),
                String::strip, defaultNamespace(beanClass, method));
        if (namespace.isEmpty() || namespace.length() > ScopedKey.MAX_NAMESPACE) {
            problems.add(" has namespace '" + namespace + "': it must be 1 to "
                    + ScopedKey.MAX_NAMESPACE + " characters");
        }
        required = lookup.get("required", annotation.required() ? null : "false",
                v -> ConfigValues.bool(lookup.keyOf("required"), v), global.required());
        keepOn = lookup.get("keepOn", classNames(annotation.keepOn()),
                v -> throwables(lookup.keyOf("keepOn"), v, method), List.of());
        releaseOn = lookup.get("releaseOn", classNames(annotation.releaseOn()),
                v -> throwables(lookup.keyOf("releaseOn"), v, method), List.of());
        for (Class<? extends Throwable> kept : keepOn) {
            if (!canRebuild(kept)) {
                problems.add(" keeps " + kept.getName() + ", which has no public constructor "
                        + "taking a String (or none): give it one, or remove it from keepOn");
            }
        }
        onConcurrent = lookup.get("onConcurrent",
                annotation.onConcurrent() == OnConcurrent.DEFAULT ? null : annotation.onConcurrent().name(),
                v -> OnConcurrent.valueOf(ConfigValues.oneOf(lookup.keyOf("onConcurrent"), v, "reject", "wait").toUpperCase()),
                // A consumer's duplicate of a record still running elsewhere (a rebalance) waits for its outcome: a
                // refusal would be a nack, which stops the channel on most connectors' default failure strategy.
                incomingMethod ? OnConcurrent.WAIT : global.onConcurrent());
        waitTimeout = lookup.get("waitTimeout", blankToNull(annotation.waitTimeout()),
                v -> ConfigValues.duration(lookup.keyOf("waitTimeout"), v, true), null);
        ttl = lookup.get("ttl", blankToNull(annotation.ttl()),
                v -> ConfigValues.duration(lookup.keyOf("ttl"), v, false), global.ttl());
        lease = lookup.get("lease", blankToNull(annotation.lease()),
                v -> ConfigValues.duration(lookup.keyOf("lease"), v, false), global.lease());
        if (waitTimeout == null) {
            // A consumer's duplicate runs beside the first delivery only once that one outlived the consumer's poll
            // interval (Kafka's max.poll.interval.ms, 5 minutes by default): it waits at least that long, or the lease.
            waitTimeout = global.waitTimeout();
            if (incomingMethod) {
                for (Duration longer : new Duration[] {CONSUMER_WAIT, lease}) {
                    if (longer != null && waitTimeout != null && longer.compareTo(waitTimeout) > 0) {
                        waitTimeout = longer;
                    }
                }
            }
        }
        if (ttl != null && lease != null && ttl.compareTo(lease) < 0) {
            problems.add(" keeps its records for " + ttl + " (ttl), less than its lease of " + lease
                    + ": a running call's record would expire while it runs, and a retry would run it again; make ttl at least"
                    + " the lease (" + lookup.keyOf("ttl") + " or idempotency.ttl, " + lookup.keyOf("lease") + " or idempotency.lease)");
        }
    }

    /** The members of a resource method's request: header, kept statuses, size caps, fail-open, anonymous callers, keys and fingerprints from the body. */
    private void readHttp() {
        header = lookup.get("header", blankToNull(annotation.header()),
                v -> ConfigValues.headerName(lookup.keyOf("header"), v), global.header());
        keepStatus = lookup.get("keepStatus", blankToNull(annotation.keepStatus()),
                v -> StatusSet.parse(lookup.keyOf("keepStatus"), v), global.keepStatus());
        maxResponseSize = lookup.get("maxResponseSize", annotation.maxResponseSize() < 0 ? null : String.valueOf(annotation.maxResponseSize()),
                v -> (long) ConfigValues.integer(lookup.keyOf("maxResponseSize"), v, 0, 16_777_216), global.maxResponseSize());
        maxRequestSize = lookup.get("maxRequestSize", annotation.maxRequestSize() < 0 ? null : String.valueOf(annotation.maxRequestSize()),
                v -> (long) ConfigValues.integer(lookup.keyOf("maxRequestSize"), v, 1, GlobalSettings.MAX_REQUEST_SIZE_LIMIT),
                global.maxRequestSize());
        failOpen = lookup.get("failOpen", annotation.failOpen() ? "true" : null,
                v -> ConfigValues.bool(lookup.keyOf("failOpen"), v), global.failOpen());
        anonymous = lookup.get("anonymous", blankToNull(annotation.anonymous()),
                v -> AnonymousPolicy.parse(lookup.keyOf("anonymous"), v), global.anonymous());
        keyFrom = lookup.get("keyFrom", blankToNull(annotation.keyFrom()),
                v -> jsonPointer(lookup.keyOf("keyFrom"), v.strip()), "");
        keyFromHeader = lookup.get("keyFromHeader", annotation.keyFromHeader() ? null : "false",
                v -> ConfigValues.bool(lookup.keyOf("keyFromHeader"), v), true);
        fingerprintFields = lookup.get("fingerprintFields",
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
        // configuration only (no annotation member); an empty value is no value (MicroProfile Config): the global one applies
        expiryHeader = lookup.get("expiryHeader", null,
                v -> v.isBlank() ? "" : ConfigValues.headerName(lookup.keyOf("expiryHeader"), v.strip()), global.expiryHeader());
        boolean bodyOptions = !keyFrom.isEmpty() || !keyFromHeader || !fingerprintFields.isEmpty();
        if (bodyOptions && keySource != KeySource.HTTP_HEADER && keySource != null) {
            problems.add(" names keyFrom, keyFromHeader or fingerprintFields, which are for JAX-RS "
                    + "resource methods (a JSON request body); remove them, or mark the key with @IdempotencyKey");
        }
        if (!keyFromHeader && keyFrom.isEmpty()) {
            problems.add(" has keyFromHeader = false and no keyFrom: its requests have no key; "
                    + "name the body field with the key (keyFrom = \"/orderId\"), or take the header");
        }
        if (keySource == KeySource.HTTP_HEADER && anonymous.mode() == AnonymousPolicy.Mode.HEADER && !global.scopeByPrincipal()) {
            problems.add(" scopes anonymous keys by the header " + anonymous.header()
                    + " (anonymous=" + anonymous + "), but idempotency.scope-by-principal=false shares every key among all"
                    + " callers: set idempotency.scope-by-principal=true, or anonymous to allow or reject");
        }
    }

    /**
     * The members of a message consumer: the property (JMS) or header (a record of an {@code @Incoming} method) that
     * carries the key, and what a duplicate of a record whose failure was kept gets.
     */
    private void readMessaging() {
        boolean record = keySource == KeySource.RECORD || incomingMethod;
        messageProperty = lookup.get("messageProperty", blankToNull(annotation.messageProperty()), v -> {
            String p = v.strip();
            if (record) {
                if (p.isEmpty() || !p.chars().allMatch(c -> c > ' ' && c < 127)) {
                    throw new IllegalArgumentException(lookup.keyOf("messageProperty") + "=" + v
                            + " is not a record header name (visible ASCII characters, no spaces)");
                }
                return p;
            }
            if (p.isEmpty() || !Character.isJavaIdentifierStart(p.charAt(0)) || !p.chars().allMatch(Character::isJavaIdentifierPart)) {
                throw new IllegalArgumentException(lookup.keyOf("messageProperty") + "=" + v + " is not a JMS property name");
            }
            return p;
        }, null);
        if (messageProperty != null && incomingMethod && keySource == KeySource.PARAMETER) {
            problems.add(" names a messageProperty, and its key is inside its payload ("
                    + (keyInside != null ? keyInside.description() : "parameter " + (keyIndex + 1))
                    + "); keep one: remove messageProperty, or @IdempotencyKey and take the Message<T>");
        } else if (messageProperty != null && keySource != KeySource.JMS_MESSAGE && keySource != KeySource.RECORD && keySource != null) {
            problems.add(" names a messageProperty but is not onMessage(jakarta.jms.Message) or an @Incoming method; "
                    + "remove messageProperty");
        }
        boolean nack = lookup.get("keptFailures", null,
                v -> ConfigValues.oneOf(lookup.keyOf("keptFailures"), v, "ack", "nack").equalsIgnoreCase("nack"), false);
        // The global key applies to the consumers among all methods; only a method's own key names a method that is not one.
        if (nack && !incomingMethod && !lookup.keyOf("keptFailures").startsWith(MethodSettingsResolver.SEGMENT)) {
            problems.add(" names keptFailures, which is for @Incoming methods; remove it");
        }
        incoming = incomingMethod ? new MethodSettings.Incoming(takes(MESSAGE), takes(CONSUMER_RECORD),
                CompletionStage.class.isAssignableFrom(method.getReturnType()), nack, connector()) : null;
    }

    /** The connector of the method's (first) channel, as MicroProfile Reactive Messaging's configuration names it. */
    private String connector() {
        String channel = MethodSettingsResolver.incomingChannel(method);
        if (channel == null) {
            return null;
        }
        try {
            return config.getOptionalValue("mp.messaging.incoming." + channel + ".connector", String.class).orElse(null);
        } catch (RuntimeException e) {
            return null; // a configuration that cannot say: the reader looks at each message
        }
    }

    /** How long a consumer's duplicate waits for the first delivery by default: Kafka's default max.poll.interval.ms. */
    static final Duration CONSUMER_WAIT = Duration.ofMinutes(5);

    static final String MESSAGE = "org.eclipse.microprofile.reactive.messaging.Message";
    static final String CONSUMER_RECORD = "org.apache.kafka.clients.consumer.ConsumerRecord";
    private static final List<String> STREAMS = List.of("org.reactivestreams.Publisher", "org.reactivestreams.Subscriber",
            "org.reactivestreams.Processor", "java.util.concurrent.Flow$Publisher", "java.util.concurrent.Flow$Subscriber",
            "java.util.concurrent.Flow$Processor", "io.smallrye.mutiny.Multi",
            "org.eclipse.microprofile.reactive.streams.operators.PublisherBuilder",
            "org.eclipse.microprofile.reactive.streams.operators.SubscriberBuilder",
            "org.eclipse.microprofile.reactive.streams.operators.ProcessorBuilder");

    /** Whether the method's one parameter is of the named type. */
    private boolean takes(String type) {
        return method.getParameterCount() == 1 && method.getParameterTypes()[0].getName().equals(type);
    }

    /**
     * An {@code @Incoming} method's shape: a consumer of one record at a time ({@code void m(T)},
     * {@code CompletionStage<Void> m(T)}, {@code CompletionStage<Void> m(Message<T>)}); streams and processors are
     * refused, naming the shapes that work.
     */
    private void checkIncoming() {
        if (!incomingMethod) {
            return;
        }
        String shapes = "take one record at a time: void m(T), CompletionStage<Void> m(T) or CompletionStage<Void> m(Message<T>)";
        for (Annotation a : method.getAnnotations()) {
            if (a.annotationType().getName().equals("org.eclipse.microprofile.reactive.messaging.Outgoing")) {
                problems.add(" is a processor (@Incoming and @Outgoing): @Idempotent applies to consumers, which end a "
                        + "record's way; " + shapes + ", and send on with an Emitter inside it");
                return;
            }
        }
        List<Class<?>> types = new ArrayList<>(List.of(method.getParameterTypes()));
        types.add(method.getReturnType());
        for (Class<?> t : types) {
            String stream = streamType(t);
            if (stream != null) {
                problems.add(" is an @Incoming method on a stream (" + stream + "): an @Idempotent consumer must " + shapes);
                return;
            }
        }
        if (method.getParameterCount() != 1) {
            problems.add(" is an @Incoming method with " + method.getParameterCount() + " parameters: an @Idempotent consumer must " + shapes);
        }
        Class<?> r = method.getReturnType();
        if (r != void.class && !CompletionStage.class.isAssignableFrom(r)) {
            problems.add(" is an @Incoming method that returns " + r.getName() + ": an @Idempotent consumer must " + shapes);
        }
    }

    /** The stream type the class is or implements (Reactive Streams, Flow, Mutiny's Multi, the MicroProfile builders), or {@code null}. */
    private static String streamType(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (STREAMS.contains(c.getName())) {
                return c.getName();
            }
            for (Class<?> i : c.getInterfaces()) {
                String found = streamType(i);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /** The claim mode the method asks for (its default is chosen when the application starts). */
    private void readClaim() {
        claim = lookup.get("claim", annotation.claim() == ClaimMode.DEFAULT ? null : annotation.claim().name(),
                v -> GlobalSettings.claimMode(lookup.keyOf("claim"), v), global.claim());
    }

    /** What is stored: the result's type can be written and read back, and every parameter fingerprinted. */
    private void checkStorable() {
        // What is stored
        returnType = method.getGenericReturnType();
        async = CompletionStage.class.isAssignableFrom(method.getReturnType());
        valueType = returnType;
        if (incomingMethod) {
            // A consumer's answer is that its record was handled: nothing is stored but the fact. Its work is what the
            // method does before it returns; a CompletionStage it returns only acknowledges the record.
            async = false;
            valueType = Void.class;
        }
        if (async) {
            valueType = returnType instanceof ParameterizedType p ? p.getActualTypeArguments()[0] : Object.class;
            if (!method.getReturnType().isAssignableFrom(java.util.concurrent.CompletableFuture.class)) {
                problems.add(" returns " + method.getReturnType().getName()
                        + ": return CompletionStage or CompletableFuture, which a replay can rebuild");
            }
        }
        voidResult = valueType == void.class || valueType == Void.class;
        if (!voidResult && keySource != KeySource.HTTP_HEADER) {
            String problem = StorableTypes.problem(valueType);
            if (problem != null) {
                problems.add(" returns " + returnType.getTypeName() + ", which cannot be stored: "
                        + problem + ". Return a concrete type (a record, a class with a no-argument constructor, a List<T> of one)");
            }
        }
        if (keySource == KeySource.PARAMETER) {
            Type[] params = method.getGenericParameterTypes();
            for (int i = 0; i < params.length; i++) {
                if (i != keyIndex && isUnfingerprintable(params[i])) {
                    problems.add(" takes a " + params[i].getTypeName() + " (parameter " + (i + 1)
                            + "), which cannot be fingerprinted: pass the data itself (a String, byte[], or a value object)");
                }
            }
        }
    }

    /** The claim mode against the method's shape: a suspended response or a CompletionStage cannot be atomic; a static or private method cannot be intercepted. */
    private void checkClaim() {
        // A JAX-RS method that suspends its response (@Suspended AsyncResponse) answers on another thread, after the
        // request's thread has gone on to other requests: no transaction begun on that thread may wait for it.
        boolean suspends = java.util.Arrays.stream(method.getParameterAnnotations()).flatMap(java.util.Arrays::stream)
                .anyMatch(a -> a.annotationType().getName().equals("jakarta.ws.rs.container.Suspended"));
        boolean inTransaction = claim == ClaimMode.ATOMIC || claim == ClaimMode.OPTIMISTIC;
        if (suspends && inTransaction) {
            problems.add(" suspends its response (@Suspended) and asks for claim " + claim + ": its "
                    + "answer comes after the request's transaction must end. Use claim = ClaimMode.LEASED (or leave claim to its default)");
        } else if (suspends) {
            claim = ClaimMode.LEASED;
        }
        if (async && inTransaction) {
            problems.add(" returns a CompletionStage and asks for claim " + claim + ": its work ends "
                    + "after the transaction could commit. Use claim = ClaimMode.LEASED (or leave claim to its default)");
        }
        if (Modifier.isStatic(method.getModifiers()) || Modifier.isPrivate(method.getModifiers())) {
            problems.add(" is static or private, so no interceptor can run: make it a public "
                    + "business method");
        }
    }

    /**
     * The mistakes of one method, each message naming it ({@code @Idempotent method <class>#<method> ...}): the one place
     * that writes that prefix.
     */
    private record MethodProblems(String where, ConfigErrors errors) {
        void add(String rest) {
            errors.add("@Idempotent method " + where + rest);
        }
    }

    /** Reads a member: the most specific configuration key, else the annotation, else the fallback. */
    private final class Lookup {
        private final String fqcn;
        private final String methodName;
        private final MethodProblems problems;

        Lookup(String fqcn, String methodName, MethodProblems problems) {
            this.fqcn = fqcn;
            this.methodName = methodName;
            this.problems = problems;
        }

        /** The most specific key set for the member, or the annotation's form when none is. */
        String keyOf(String member) {
            for (String key : keys(member)) {
                if (config.getOptionalValue(key, String.class).isPresent()) {
                    return key;
                }
            }
            return "@Idempotent(" + member + ") on " + problems.where();
        }

        List<String> keys(String member) {
            return List.of(fqcn + "/" + methodName + "/" + MethodSettingsResolver.SEGMENT + member, fqcn + "/" + MethodSettingsResolver.SEGMENT + member, MethodSettingsResolver.SEGMENT + member);
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
                problems.add(": " + e.getMessage());
                return fallback;
            }
        }
    }
}
