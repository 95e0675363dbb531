package dev.idempotency.cdi;

import dev.idempotency.ForIdempotency;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.MethodSettingsResolver;

import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.build.compatible.spi.BuildCompatibleExtension;
import jakarta.enterprise.inject.build.compatible.spi.ClassConfig;
import jakarta.enterprise.inject.build.compatible.spi.Discovery;
import jakarta.enterprise.inject.build.compatible.spi.BeanInfo;
import jakarta.enterprise.inject.build.compatible.spi.Enhancement;
import jakarta.enterprise.inject.build.compatible.spi.MetaAnnotations;
import jakarta.enterprise.inject.build.compatible.spi.Parameters;
import jakarta.enterprise.inject.build.compatible.spi.Registration;
import jakarta.enterprise.inject.build.compatible.spi.ScannedClasses;
import jakarta.enterprise.inject.build.compatible.spi.SkipIfPortableExtensionPresent;
import jakarta.enterprise.inject.build.compatible.spi.Synthesis;
import jakarta.enterprise.inject.build.compatible.spi.SyntheticBeanCreator;
import jakarta.enterprise.inject.build.compatible.spi.SyntheticComponents;
import jakarta.enterprise.lang.model.declarations.ClassInfo;
import jakarta.enterprise.lang.model.declarations.MethodInfo;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import dev.idempotency.messaging.MessageReaders;
import dev.idempotency.runtime.IdempotencyDeployment;
import dev.idempotency.interceptor.IdempotentInterceptor;

/**
 * The build compatible extension, for containers that run no portable extension (CDI Lite: Quarkus's ArC): it does what
 * {@link IdempotencyExtension} does, in CDI Lite's phases. It registers the library's beans and its interceptor, with
 * the configured priority (inside {@code @Transactional}); it notes every class with an {@code @Idempotent} method; and
 * it adds {@link IdempotencyDeployment} as a bean that resolves and checks those methods with the run-time
 * configuration when the application starts, so that every mistake fails the start with the portable extension's
 * message. Where the portable extension runs (Weld: every Jakarta EE server), this one is skipped.
 */
@SkipIfPortableExtensionPresent(IdempotencyExtension.class)
public class IdempotencyBuildCompatibleExtension implements BuildCompatibleExtension {

    private final Set<String> idempotentTypes = new LinkedHashSet<>();
    private final Set<String> keyTypes = new LinkedHashSet<>();

    @Discovery
    public void discover(ScannedClasses scan, MetaAnnotations meta) {
        // The jar's classes are not discovered (its beans.xml says none), so its annotations are declared here: ArC
        // refuses a qualifier it has not seen, and binds an interceptor only to a binding it knows
        meta.addQualifier(ForIdempotency.class);
        meta.addInterceptorBinding(Idempotent.class);
        scan.add(IdempotentInterceptor.class.getName());
        for (Class<?> bean : IdempotencyExtension.libraryBeans()) {
            scan.add(bean.getName());
        }
    }

    @Enhancement(types = IdempotentInterceptor.class)
    public void priority(ClassConfig interceptor) {
        interceptor.addAnnotation(new PriorityLiteral(interceptorPriority()));
    }

    /**
     * Every bean the container keeps (a class left out, by a build property or a profile, say, is not one) whose class
     * has an {@code @Idempotent} method, or is {@code @Idempotent}, itself or through a superclass.
     */
    @Registration(types = Object.class)
    public void idempotentBean(BeanInfo bean) {
        ClassInfo type = bean.declaringClass();
        if (bean.isClassBean() && !bean.isInterceptor() && !type.isInterface() && !Modifier.isAbstract(type.modifiers())
                && idempotent(type)) {
            idempotentTypes.add(type.name());
        }
    }

    /** Whether the class or a superclass is {@code @Idempotent}, or one of its methods (its supertypes' included) is. */
    private static boolean idempotent(ClassInfo type) {
        try {
            for (ClassInfo c = type; c != null; c = c.superClassDeclaration()) {
                if (c.hasAnnotation(Idempotent.class)) {
                    return true;
                }
            }
            for (MethodInfo m : type.methods()) {
                if (m.hasAnnotation(Idempotent.class)) {
                    return true;
                }
            }
            return false;
        } catch (RuntimeException e) {
            return true; // a supertype the container cannot read (ArC, one missing from its index): read by reflection at start
        }
    }

    @Enhancement(types = Object.class, withSubtypes = true, withAnnotations = IdempotencyKey.class)
    public void keyType(ClassInfo type) {
        keyTypes.add(type.name());
    }

    @Synthesis
    public void synthesize(SyntheticComponents components) {
        components.addBean(IdempotencyDeployment.class)
                .type(IdempotencyDeployment.class)
                .scope(Singleton.class)
                .withParam(Resolution.TYPES, idempotentTypes.toArray(String[]::new))
                .withParam(Resolution.KEY_TYPES, keyTypes.toArray(String[]::new))
                .withParam(Resolution.PRIORITY, interceptorPriority())
                .createWith(Resolution.class);
    }

    /** The interceptor's priority: {@code idempotency.interceptor.priority}, or its default. */
    private static int interceptorPriority() {
        try {
            return ConfigProvider.getConfig(classLoader()).getOptionalValue("idempotency.interceptor.priority", Integer.class)
                    .orElse(GlobalSettings.DEFAULT_INTERCEPTOR_PRIORITY);
        } catch (RuntimeException e) {
            return GlobalSettings.DEFAULT_INTERCEPTOR_PRIORITY; // read again, and refused, when the application starts
        }
    }

    private static ClassLoader classLoader() {
        ClassLoader tccl = Thread.currentThread().getContextClassLoader();
        return tccl != null ? tccl : IdempotencyBuildCompatibleExtension.class.getClassLoader();
    }

    /** Creates {@link IdempotencyDeployment} when the application starts: every noted method resolved and checked. */
    public static class Resolution implements SyntheticBeanCreator<IdempotencyDeployment> {
        static final String TYPES = "types";
        static final String KEY_TYPES = "keyTypes";
        static final String PRIORITY = "priority";

        @Override
        public IdempotencyDeployment create(Instance<Object> lookup, Parameters params) {
            Config config = ConfigProvider.getConfig(classLoader());
            ConfigErrors errors = new ConfigErrors();
            GlobalSettings global = GlobalSettings.read(config, errors);
            int built = params.get(PRIORITY, Integer.class, GlobalSettings.DEFAULT_INTERCEPTOR_PRIORITY);
            if (global != null && global.interceptorPriority() != built) {
                errors.add("idempotency.interceptor.priority is " + global.interceptorPriority() + " now, but the interceptor's "
                        + "priority was fixed at " + built + " when the application was built: set it in the build's "
                        + "configuration (application.properties) and build again");
            }
            MethodSettingsResolver resolver = new MethodSettingsResolver(config, global);
            resolver.checkMemberKeys(errors);
            IdempotencyDeployment deployment = new IdempotencyDeployment(config, global, resolver, MessageReaders::forMethod);
            Set<Class<?>> parameterTypes = new HashSet<>();
            for (String name : params.get(TYPES, String[].class, new String[0])) {
                deployment.resolveByReflection(load(name), errors, parameterTypes);
            }
            Map<Class<?>, String> keyMembers = new HashMap<>();
            for (String name : params.get(KEY_TYPES, String[].class, new String[0])) {
                Class<?> type = load(name);
                String member = IdempotencyExtension.keyMember(type);
                if (member != null) {
                    keyMembers.put(type, member);
                }
            }
            IdempotencyExtension.checkKeyMembers(keyMembers, parameterTypes, errors);
            errors.throwIfAny();
            return deployment;
        }

        private static Class<?> load(String name) {
            try {
                return Class.forName(name, false, classLoader());
            } catch (ClassNotFoundException e) {
                throw new IdempotencyConfigurationException("The @Idempotent class " + name + " cannot be loaded", e);
            }
        }
    }
}
