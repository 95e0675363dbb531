package dev.idempotency.jaxrs;

import dev.idempotency.Idempotent;
import dev.idempotency.cdi.IdempotencyExtension;
import dev.idempotency.cdi.IdempotencyRuntime;
import dev.idempotency.config.MethodSettings;

import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;

import java.lang.reflect.Method;

/**
 * Binds the {@code Idempotency-Key} filter to the {@code @Idempotent} resource methods (on the method or its
 * class), and to nothing else: other resources pay nothing, their bodies are not buffered (SPEC H1).
 * Discovered as a {@code @Provider} and through {@code META-INF/services/jakarta.ws.rs.ext.Providers}:
 * an application registers nothing.
 */
@Provider
public class IdempotencyFeature implements DynamicFeature {

    /** After authentication and authorisation, so that the principal is known. */
    public static final int PRIORITY = Priorities.USER;

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        Method method = resourceInfo.getResourceMethod();
        Class<?> resourceClass = resourceInfo.getResourceClass();
        if (method == null || (method.getAnnotation(Idempotent.class) == null
                && (resourceClass == null || resourceClass.getAnnotation(Idempotent.class) == null))) {
            return;
        }
        IdempotencyExtension extension = CDI.current().select(IdempotencyExtension.class).get();
        MethodSettings settings = extension.settingsFor(resourceClass, method);
        extension.markHttpBound(method);
        if (!settings.enabled()) {
            return;
        }
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        context.register(new IdempotencyHttpFilter(settings, runtime), PRIORITY);
    }
}
