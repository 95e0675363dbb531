package dev.idempotency.runtime;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.config.MethodSettingsResolver;

import org.eclipse.microprofile.config.Config;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the deployment resolved: the configuration in use, the global settings, and every {@code @Idempotent} method's
 * settings. Filled by the CDI extension while the container starts, and served to the library's beans (the
 * interceptor, the runtime, the purge, the JAX-RS feature) as a bean of its own, so that they depend on no
 * container's extension mechanism.
 */
public final class IdempotencyDeployment {

    private final Config config;
    private final GlobalSettings global;
    private final MethodSettingsResolver resolver;
    /**
     * Keyed by bean class and method: an inherited {@code @Idempotent} method of two bean classes has the
     * settings of each (its namespace and overrides are per bean class).
     */
    private final Map<BeanMethod, MethodSettings> settings = new ConcurrentHashMap<>();
    /** What {@link #settingsFor} found for a target class (a container's subclass of the bean class, say): found once. */
    private final Map<BeanMethod, MethodSettings> byTargetClass = new ConcurrentHashMap<>();
    private final Set<Method> httpBound = ConcurrentHashMap.newKeySet();
    /** Chooses a method's reader: the wiring's choice among the kinds of message, else its parameters. */
    private final java.util.function.Function<MethodSettings, CallReader> readers;
    /**
     * Each method's reader, chosen once: by identity (each method's settings are one object), read without a lock and
     * copied on the rare write.
     */
    private volatile Map<MethodSettings, CallReader> chosenReaders = new java.util.IdentityHashMap<>();

    /** A method as a member of one bean class. */
    private record BeanMethod(Class<?> beanClass, Method method) {
    }

    /**
     * @param readers a method's reader when it takes a message (the wiring knows the kinds of message), else {@code null}:
     *                its key is then an argument ({@link ParameterReader})
     */
    public IdempotencyDeployment(Config config, GlobalSettings global, MethodSettingsResolver resolver,
                                 java.util.function.Function<MethodSettings, CallReader> readers) {
        this.config = config;
        this.global = global;
        this.resolver = resolver;
        this.readers = readers;
    }

    /** What the interceptor reads from this method's arguments: chosen when the method's settings were resolved, then kept. */
    public CallReader readerFor(MethodSettings method) {
        CallReader known = chosenReaders.get(method);
        return known != null ? known : choose(method);
    }

    private synchronized CallReader choose(MethodSettings method) {
        CallReader known = chosenReaders.get(method);
        if (known != null) {
            return known;
        }
        CallReader chosen = readers.apply(method);
        CallReader reader = chosen != null ? chosen : new ParameterReader(method);
        Map<MethodSettings, CallReader> more = new java.util.IdentityHashMap<>(chosenReaders);
        more.put(method, reader);
        chosenReaders = more;
        return reader;
    }

    /** Resolves and keeps a method's settings at deployment; a mistake is added to {@code errors}. */
    public void resolve(Class<?> beanClass, Method method, Idempotent annotation, ConfigErrors errors) {
        resolver.resolve(beanClass, method, annotation, errors).ifPresent(s -> {
            settings.put(new BeanMethod(beanClass, method), s);
            readerFor(s);
        });
    }

    /**
     * Resolves a bean class's {@code @Idempotent} methods by reflection, as the portable extension does from its annotated
     * type: a method's own annotation, else the class's on its business methods; its own methods and those it inherits,
     * an overridden one once. The methods' parameter types go to {@code parameterTypes}.
     */
    public void resolveByReflection(Class<?> beanClass, ConfigErrors errors, Set<Class<?>> parameterTypes) {
        Idempotent classLevel = beanClass.getAnnotation(Idempotent.class);
        Set<String> seen = new java.util.HashSet<>();
        for (Class<?> c = beanClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method method : c.getDeclaredMethods()) {
                if (method.isSynthetic() || method.isBridge()
                        || !seen.add(method.getName() + java.util.Arrays.toString(method.getParameterTypes()))) {
                    continue;
                }
                Idempotent annotation = method.getAnnotation(Idempotent.class);
                if (annotation == null && classLevel != null && isBusinessMethod(method)) {
                    annotation = classLevel;
                }
                if (annotation != null) {
                    parameterTypes.addAll(java.util.Arrays.asList(method.getParameterTypes()));
                    resolve(beanClass, method, annotation, errors);
                }
            }
        }
    }

    /** A method that a class-level {@code @Idempotent} covers: public, not static, not Object's, not generated. */
    public static boolean isBusinessMethod(Method m) {
        int mod = m.getModifiers();
        return java.lang.reflect.Modifier.isPublic(mod) && !java.lang.reflect.Modifier.isStatic(mod)
                && m.getDeclaringClass() != Object.class && !m.isSynthetic() && !m.isBridge();
    }

    /** The global settings read at deployment. */
    public GlobalSettings globalSettings() {
        return global;
    }

    /** The configuration in use. */
    public Config config() {
        return config;
    }

    /** Every {@code @Idempotent} method's settings, resolved at deployment. */
    public Collection<MethodSettings> allSettings() {
        return List.copyOf(settings.values());
    }

    /**
     * The settings of an intercepted method: resolved at deployment, or now for a bean the extension did not see (one
     * added by another extension), and then kept.
     *
     * @throws IdempotencyConfigurationException when that late resolution finds a mistake
     */
    public MethodSettings settingsFor(Class<?> targetClass, Method method) {
        BeanMethod asCalled = new BeanMethod(targetClass, method);
        MethodSettings known = byTargetClass.get(asCalled);
        if (known != null) {
            return known;
        }
        // The target may be a subclass of the bean class (a container's proxy or subclass): its nearest
        // superclass that was resolved is the bean class.
        for (Class<?> c = targetClass; c != null && c != Object.class; c = c.getSuperclass()) {
            MethodSettings s = settings.get(new BeanMethod(c, method));
            if (s != null) {
                byTargetClass.put(asCalled, s);
                return s;
            }
        }
        // A bean the extension did not see (added by another extension): resolved now, by its declaring class.
        return settings.computeIfAbsent(new BeanMethod(method.getDeclaringClass(), method), bm -> {
            Idempotent annotation = method.getAnnotation(Idempotent.class);
            if (annotation == null) {
                annotation = method.getDeclaringClass().getAnnotation(Idempotent.class);
            }
            ConfigErrors late = new ConfigErrors();
            MethodSettings resolved = resolver.resolve(bm.beanClass(), method, annotation, late).orElse(null);
            late.throwIfAny();
            if (resolved != null) {
                readerFor(resolved);
            }
            return resolved;
        });
    }

    /** Records that the JAX-RS filter guards this resource method (called by the dynamic feature). */
    public void markHttpBound(Method method) {
        httpBound.add(method);
    }

    /** Whether the JAX-RS filter guards this resource method. */
    public boolean isHttpBound(Method method) {
        return httpBound.contains(method);
    }
}
