package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.MethodSettingsResolver;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.BeforeBeanDiscovery;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.WithAnnotations;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import dev.idempotency.runtime.StoreSelection;
import dev.idempotency.runtime.JtaSupport;
import dev.idempotency.runtime.PurgeSchedule;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;
import dev.idempotency.runtime.ManagedExecutors;
import dev.idempotency.runtime.RequestEnd;
import dev.idempotency.messaging.MessageReaders;
import dev.idempotency.runtime.IdempotencyDeployment;
import dev.idempotency.runtime.CacheSelection;
import dev.idempotency.interceptor.IdempotentInterceptor;
import dev.idempotency.functional.IdempotencyBean;
import dev.idempotency.manager.IdempotencyManagerBean;
import dev.idempotency.health.IdempotencyReadinessCheck;
import dev.idempotency.adapter.helidon.HelidonDataSources;
import dev.idempotency.runtime.Lookups;
import dev.idempotency.runtime.EarlyStart;

/**
 * The portable extension: reads the configuration, registers the interceptor (with its configured
 * priority) and the library's beans, and resolves and checks every {@code @Idempotent} method at
 * deployment. Every mistake becomes a definition error, so the deployment fails naming the method (or, for a
 * bad configuration value, its key) and the fix.
 *
 * <p>Registered through {@code META-INF/services}; in a Weld SE test add it yourself, optionally with
 * the {@link Config} to use.
 */
public class IdempotencyExtension implements Extension, EarlyStart {

    private final Config explicitConfig;
    private final ConfigErrors errors = new ConfigErrors();
    private IdempotencyDeployment deployment;

    /** For the container: configuration from {@link ConfigProvider}. */
    public IdempotencyExtension() {
        this(null);
    }

    /** With the given configuration (tests). */
    public IdempotencyExtension(Config config) {
        this.explicitConfig = config;
    }

    void beforeBeanDiscovery(@Observes BeforeBeanDiscovery bbd) {
        Config config = explicitConfig != null ? explicitConfig : ConfigProvider.getConfig(configClassLoader());
        GlobalSettings global = GlobalSettings.read(config, errors);
        MethodSettingsResolver resolver = new MethodSettingsResolver(config, global);
        resolver.checkMemberKeys(errors);
        deployment = new IdempotencyDeployment(config, global, resolver, MessageReaders::forMethod);
        bbd.addAnnotatedType(IdempotentInterceptor.class, IdempotentInterceptor.class.getName())
                .add(new PriorityLiteral(global.interceptorPriority()));
        for (Class<?> bean : libraryBeans()) {
            bbd.addAnnotatedType(bean, bean.getName());
        }
    }

    /** Whether the application has a {@code @ForIdempotency DataSource} bean of its own. */
    private volatile boolean ownDataSource;

    <T> void findOwnDataSource(@Observes jakarta.enterprise.inject.spi.ProcessBean<T> pb) {
        jakarta.enterprise.inject.spi.Bean<T> bean = pb.getBean();
        if (bean.getTypes().contains(javax.sql.DataSource.class)
                && bean.getQualifiers().stream().anyMatch(q -> q.annotationType() == dev.idempotency.ForIdempotency.class)) {
            ownDataSource = true;
        }
    }

    /** The library's beans besides its interceptor: those its extensions (portable or build compatible) register. */
    static java.util.List<Class<?>> libraryBeans() {
        java.util.List<Class<?>> beans = new java.util.ArrayList<>(java.util.List.of(IdempotencyRuntime.class,
                ManagedExecutors.class, StoreSelection.class, CacheSelection.class, Callers.class, PurgeSchedule.class,
                IdempotencyManagerBean.class, IdempotencyBean.class, RequestEnd.class));
        if (Lookups.present("org.eclipse.microprofile.health.HealthCheck")) {
            beans.add(IdempotencyReadinessCheck.class);
        }
        if (JtaSupport.isAvailable()) {
            beans.add(JtaSupport.RequiresNewBean.class);
            beans.add(JtaSupport.RequiredBean.class);
        }
        return beans;
    }

    <T> void checkAnnotatedType(@Observes @WithAnnotations(Idempotent.class) ProcessAnnotatedType<T> pat) {
        AnnotatedType<T> type = pat.getAnnotatedType();
        Class<T> beanClass = type.getJavaClass();
        if (beanClass.isInterface() || Modifier.isAbstract(beanClass.getModifiers()) || beanClass == IdempotentInterceptor.class) {
            return;
        }
        Idempotent classLevel = type.getAnnotation(Idempotent.class);
        for (AnnotatedMethod<? super T> m : type.getMethods()) {
            Method method = m.getJavaMember();
            Idempotent annotation = m.getAnnotation(Idempotent.class);
            if (annotation == null && classLevel != null && IdempotencyDeployment.isBusinessMethod(method)) {
                annotation = classLevel;
            }
            if (annotation != null) {
                parameterTypes.addAll(java.util.Arrays.asList(method.getParameterTypes()));
                deployment.resolve(beanClass, method, annotation, errors);
            }
        }
    }

    /** Types with a member marked {@code @IdempotencyKey}, checked against the parameter types below. */
    private final Map<Class<?>, String> typesWithKeyMembers = new ConcurrentHashMap<>();
    /** The parameter types of every {@code @Idempotent} method resolved at deployment. */
    private final java.util.Set<Class<?>> parameterTypes = ConcurrentHashMap.newKeySet();

    <T> void findKeyMembers(@Observes @WithAnnotations(IdempotencyKey.class) ProcessAnnotatedType<T> pat) {
        Class<T> type = pat.getAnnotatedType().getJavaClass();
        String member = keyMember(type);
        if (member != null) {
            typesWithKeyMembers.putIfAbsent(type, member);
        }
    }

    private final HelidonDataSources helidon = new HelidonDataSources();

    void afterBeanDiscovery(@Observes AfterBeanDiscovery abd, jakarta.enterprise.inject.spi.BeanManager beanManager) {
        checkKeyMembers(typesWithKeyMembers, parameterTypes, errors);
        errors.all().forEach(abd::addDefinitionError);
        IdempotencyDeployment resolved = deployment;
        abd.addBean().types(IdempotencyDeployment.class, Object.class).scope(Dependent.class)
                .beanClass(IdempotencyDeployment.class).createWith(c -> resolved);
        if (!ownDataSource && !resolved.globalSettings().store().equals("memory") && HelidonDataSources.applies()) {
            // Helidon MP: its data sources are plain pools; the records' one, and the JPA units', are enlisted in JTA
            // transactions by the library, one connection per transaction, shared by the claims and the application
            String named = resolved.globalSettings().datasource();
            helidon.register(abd, beanManager, named, named.equals(dev.idempotency.config.ConfigKey.DATASOURCE.defaultValue()));
        }
    }

    /** What this extension resolved while the container started. */
    public IdempotencyDeployment deployment() {
        return deployment;
    }

    /** A mistake for each type with an {@code @IdempotencyKey} member that is the type of no {@code @Idempotent} method's parameter. */
    static void checkKeyMembers(Map<Class<?>, String> typesWithKeyMembers, java.util.Set<Class<?>> parameterTypes, ConfigErrors errors) {
        typesWithKeyMembers.forEach((type, member) -> {
            if (!parameterTypes.contains(type)) {
                errors.add("The " + member + " of " + type.getName() + " is marked @IdempotencyKey, but " + type.getSimpleName()
                        + " is the type of no @Idempotent method's parameter: a key inside an argument is read from the"
                        + " parameter's own type (a record component, field or getter, one level deep). Mark the key where"
                        + " the @Idempotent method receives it, or remove @IdempotencyKey");
            }
        });
    }

    /** The member of a type marked {@code @IdempotencyKey} ("field id", "method id()"), or {@code null}. */
    static String keyMember(Class<?> type) {
        for (java.lang.reflect.Field f : type.getDeclaredFields()) {
            if (f.isAnnotationPresent(IdempotencyKey.class)) {
                return "field " + f.getName();
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (m.isAnnotationPresent(IdempotencyKey.class)) {
                return "method " + m.getName() + "()";
            }
        }
        return null;
    }


    private static ClassLoader configClassLoader() {
        ClassLoader tccl = Thread.currentThread().getContextClassLoader();
        return tccl != null ? tccl : IdempotencyExtension.class.getClassLoader();
    }
}
