package dev.idempotency.openapi;

import dev.idempotency.Idempotent;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.config.MethodSettingsResolver;
import dev.idempotency.runtime.IdempotencyDeployment;

import org.eclipse.microprofile.config.Config;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The application's {@code @Idempotent} JAX-RS operations, found from the compile-time list
 * ({@link GuardedResourceProcessor}) and resolved exactly as the HTTP filter resolves them (annotation, then
 * configuration): for each, its HTTP method, its path below the application's path, and its settings.
 */
final class GuardedResources {

    static final String INDEX = "META-INF/idempotency/openapi-resources";
    static final String IDEMPOTENT = "dev.idempotency.Idempotent";
    static final String APPLICATION_PATH = "jakarta.ws.rs.ApplicationPath";
    static final String PATH = "jakarta.ws.rs.Path";
    static final String RESOURCE = "resource";
    static final String APPLICATION = "application";

    private static final Logger LOG = Logger.getLogger(GuardedResources.class.getName());

    /**
     * One guarded operation.
     *
     * @param verb     {@code GET}, {@code POST}...
     * @param path     its path template below the application's path, normalized ({@link #normalize})
     * @param settings its resolved settings
     */
    record Operation(String verb, String path, MethodSettings settings) {
    }

    /**
     * What the list and the classes say.
     *
     * @param operations       the guarded operations
     * @param applicationPaths the {@code @ApplicationPath} values, normalized
     * @param listed           whether any compile-time list was found at all
     */
    record Found(List<Operation> operations, Set<String> applicationPaths, boolean listed) {
    }

    private GuardedResources() {
    }

    static Found find(ClassLoader loader, Config config, GlobalSettings global) {
        List<String> resources = new ArrayList<>();
        List<String> applications = new ArrayList<>();
        boolean listed = read(loader, resources, applications);
        Set<String> applicationPaths = new LinkedHashSet<>();
        for (String name : applications) {
            Class<?> c = load(loader, name);
            Annotation path = c == null ? null : annotation(c.getAnnotations(), APPLICATION_PATH);
            if (path != null) {
                String v = value(path);
                applicationPaths.add(normalize(v.endsWith("/*") ? v.substring(0, v.length() - 2) : v));
            }
        }
        MethodSettingsResolver resolver = new MethodSettingsResolver(config, global);
        List<Operation> operations = new ArrayList<>();
        for (String name : resources) {
            Class<?> c = load(loader, name);
            if (c != null) {
                operations(c, resolver, operations);
            }
        }
        return new Found(List.copyOf(operations), Collections.unmodifiableSet(applicationPaths), listed);
    }

    private static boolean read(ClassLoader loader, List<String> resources, List<String> applications) {
        boolean listed = false;
        try {
            for (URL url : Collections.list(loader.getResources(INDEX))) {
                listed = true;
                try (BufferedReader in = new BufferedReader(new InputStreamReader(url.openStream(), StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        String[] parts = line.strip().split("\\s+");
                        if (parts.length == 2 && parts[0].equals(RESOURCE)) {
                            resources.add(parts[1]);
                        } else if (parts.length == 2 && parts[0].equals(APPLICATION)) {
                            applications.add(parts[1]);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + INDEX, e);
        }
        return listed;
    }

    private static Class<?> load(ClassLoader loader, String name) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.log(Level.FINE, "idempotency-jakarta's OpenAPI filter skips {0}, which it cannot load: {1}", new Object[] {name, e});
            return null;
        }
    }

    /**
     * A class's {@code @Idempotent} resource methods, as the HTTP filter guards them: the methods of a concrete class and
     * those it inherits from its superclasses, with the annotation on the method or the class that declares it. An
     * interface or an abstract class is no bean, and an annotation on an interface's method guards nothing.
     */
    private static void operations(Class<?> resourceClass, MethodSettingsResolver resolver, List<Operation> out) {
        if (resourceClass.isInterface() || java.lang.reflect.Modifier.isAbstract(resourceClass.getModifiers())) {
            return;
        }
        Idempotent classLevel = resourceClass.getAnnotation(Idempotent.class);
        String classPath = pathOf(resourceClass);
        Set<String> seen = new java.util.HashSet<>();
        for (Class<?> c = resourceClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.isSynthetic() || m.isBridge() || !seen.add(m.getName() + java.util.Arrays.toString(m.getParameterTypes()))) {
                    continue;
                }
                Idempotent annotation = m.getAnnotation(Idempotent.class);
                if (annotation == null && classLevel != null && IdempotencyDeployment.isBusinessMethod(m)) {
                    annotation = classLevel;
                }
                String verb = annotation == null ? null : verb(resourceClass, m);
                if (verb == null) {
                    continue;
                }
                ConfigErrors errors = new ConfigErrors();
                MethodSettings settings = resolver.resolve(resourceClass, m, annotation, errors).orElse(null);
                if (settings == null || !settings.enabled()) {
                    // a mistake fails the deployment itself (the library's own check); a switched-off method is not guarded
                    continue;
                }
                out.add(new Operation(verb, normalize(classPath + "/" + methodPath(resourceClass, m)), settings));
            }
        }
    }

    /** The HTTP method of a resource method ({@code @POST}...), on the method or the interface method it implements. */
    private static String verb(Class<?> resourceClass, Method m) {
        for (Method candidate : declarations(resourceClass, m)) {
            for (Annotation a : candidate.getAnnotations()) {
                Annotation designator = annotation(a.annotationType().getAnnotations(), "jakarta.ws.rs.HttpMethod");
                if (designator != null) {
                    return value(designator).toUpperCase(Locale.ROOT);
                }
            }
        }
        return null;
    }

    private static String methodPath(Class<?> resourceClass, Method m) {
        for (Method candidate : declarations(resourceClass, m)) {
            Annotation path = annotation(candidate.getAnnotations(), "jakarta.ws.rs.Path");
            if (path != null) {
                return value(path);
            }
        }
        return "";
    }

    /** The class's {@code @Path}: its own, or else that of the first superclass or interface that has one. */
    private static String pathOf(Class<?> resourceClass) {
        for (Class<?> c = resourceClass; c != null && c != Object.class; c = c.getSuperclass()) {
            Annotation path = annotation(c.getAnnotations(), "jakarta.ws.rs.Path");
            if (path != null) {
                return value(path);
            }
            for (Class<?> i : c.getInterfaces()) {
                Annotation p = annotation(i.getAnnotations(), "jakarta.ws.rs.Path");
                if (p != null) {
                    return value(p);
                }
            }
        }
        return "";
    }

    /** The method, then the same method in the interfaces of its class and superclasses (JAX-RS annotation inheritance). */
    private static List<Method> declarations(Class<?> resourceClass, Method m) {
        List<Method> out = new ArrayList<>();
        out.add(m);
        for (Class<?> c = resourceClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                try {
                    out.add(i.getMethod(m.getName(), m.getParameterTypes()));
                } catch (NoSuchMethodException e) {
                    // not declared there
                }
            }
        }
        return out;
    }

    private static Annotation annotation(Annotation[] annotations, String type) {
        for (Annotation a : annotations) {
            if (a.annotationType().getName().equals(type)) {
                return a;
            }
        }
        return null;
    }

    private static String value(Annotation a) {
        try {
            return String.valueOf(a.annotationType().getMethod("value").invoke(a));
        } catch (ReflectiveOperationException e) {
            return "";
        }
    }

    /**
     * A path template as written ({@code /payments/{id: [0-9]+}/}) made comparable: one leading slash, no trailing or
     * doubled slash, each template variable as {@code {}} (names and regular expressions differ between JAX-RS and
     * OpenAPI documents).
     */
    static String normalize(String path) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '{') {
                if (depth++ == 0) {
                    out.append("{}");
                }
            } else if (c == '}') {
                depth = Math.max(0, depth - 1);
            } else if (depth == 0) {
                if (c == '/' && (out.length() == 0 || out.charAt(out.length() - 1) == '/')) {
                    continue;
                }
                out.append(c);
            }
        }
        while (out.length() > 0 && out.charAt(out.length() - 1) == '/') {
            out.setLength(out.length() - 1);
        }
        return "/" + out;
    }
}
