package dev.idempotency.jaxrs;

import dev.idempotency.Idempotent;
import dev.idempotency.cdi.IdempotencyDeployment;
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
 * class), and to nothing else: other resources pay nothing, their bodies are not buffered.
 * Discovered as a {@code @Provider} and through {@code META-INF/services/jakarta.ws.rs.ext.Providers}:
 * an application registers nothing.
 */
@Provider
public class IdempotencyFeature implements DynamicFeature {

    /**
     * The request filter's: after every request filter of the application's (authentication and authorisation, so that
     * the principal is known; a rate limiter's 429 or a check's 403), so that a key is claimed only for a request the
     * resource will run, and a refusal the resource never gave is not bound to its key.
     */
    public static final int REQUEST_PRIORITY = Integer.MAX_VALUE - 1000;

    /**
     * The response filter's: after every response filter of the application's (response filters run from the highest
     * priority down), so that the status it sees is the one sent.
     */
    public static final int RESPONSE_PRIORITY = Integer.MIN_VALUE + 1000;

    /** The writer interceptor's: inside the entity coders' ({@code Priorities.ENTITY_CODER}), as a user's. */
    public static final int WRITER_PRIORITY = Priorities.USER;

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        Method method = resourceInfo.getResourceMethod();
        Class<?> resourceClass = resourceInfo.getResourceClass();
        if (method == null || (method.getAnnotation(Idempotent.class) == null
                && (resourceClass == null || resourceClass.getAnnotation(Idempotent.class) == null))) {
            return;
        }
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        IdempotencyDeployment deployment = runtime.deployment();
        MethodSettings settings = deployment.settingsFor(resourceClass, method);
        deployment.markHttpBound(method);
        if (!settings.enabled()) {
            return;
        }
        context.register(new IdempotencyHttpFilter(settings, runtime), java.util.Map.of(
                jakarta.ws.rs.container.ContainerRequestFilter.class, REQUEST_PRIORITY,
                jakarta.ws.rs.container.ContainerResponseFilter.class, RESPONSE_PRIORITY,
                jakarta.ws.rs.ext.WriterInterceptor.class, WRITER_PRIORITY));
    }
}
