package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.Idempotent;
import dev.idempotency.runtime.IdempotencyDeployment;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.config.MethodSettings;

import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;

import java.io.IOException;
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
    /** The first of the response filters (response filters run from the highest priority down). */
    static final int ANSWER_PRIORITY = Integer.MAX_VALUE;

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        Method method = resourceInfo.getResourceMethod();
        Class<?> resourceClass = resourceInfo.getResourceClass();
        if (method == null || (method.getAnnotation(Idempotent.class) == null
                && (resourceClass == null || resourceClass.getAnnotation(Idempotent.class) == null))) {
            return;
        }
        String where = resourceClass.getName() + "#" + method.getName() + " is @Idempotent and ";
        if (STREAMS.contains(method.getReturnType().getName())) {
            // its answer comes later, on a thread of its own, and is not a stage the library waits for
            throw new IdempotencyConfigurationException(where + "returns a " + method.getReturnType().getSimpleName()
                    + ": return a CompletionStage (a Uni's subscribeAsCompletionStage()) or a plain type");
        }
        if (context.getClass().getName().startsWith("org.jboss.resteasy.reactive.") && onEventLoop(method)) {
            throw new IdempotencyConfigurationException(where + "runs on Quarkus REST's event loop, where the key's claim "
                    + "(a database call) must not block: annotate it or its class @io.smallrye.common.annotation.Blocking, "
                    + "or return a plain type instead of a stage");
        }
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        IdempotencyDeployment deployment = runtime.deployment();
        MethodSettings settings = deployment.settingsFor(resourceClass, method);
        deployment.markHttpBound(method);
        if (!settings.enabled()) {
            return;
        }
        // One filter, registered once per contract with that contract's priority: register(Object, int), which every
        // JAX-RS runtime takes (Quarkus REST refuses a map of contracts to priorities)
        IdempotencyHttpFilter filter = new IdempotencyHttpFilter(settings, runtime);
        context.register(new RequestSide(filter), REQUEST_PRIORITY);
        context.register(new ResponseSide(filter), RESPONSE_PRIORITY);
        context.register(new WriterSide(filter), WRITER_PRIORITY);
        if (filter.answersLater()) {
            context.register(new AnswerSide(filter), ANSWER_PRIORITY);
        }
    }

    private static final String BLOCKING = "io.smallrye.common.annotation.Blocking";
    private static final String VIRTUAL_THREAD = "io.smallrye.common.annotation.RunOnVirtualThread";
    private static final String NON_BLOCKING = "io.smallrye.common.annotation.NonBlocking";
    private static final String TRANSACTIONAL = "jakarta.transaction.Transactional";
    /**
     * What Quarkus REST runs on its event loop when nothing says otherwise: a stage, the streams below, Kotlin's flows and
     * Scala's futures (and a Kotlin suspending function: {@link #SUSPENDED}).
     */
    private static final java.util.Set<String> STAGES = java.util.Set.of("java.util.concurrent.CompletionStage",
            "java.util.concurrent.CompletableFuture", "kotlinx.coroutines.flow.Flow", "scala.concurrent.Future",
            "scala.concurrent.Promise");
    /** The last parameter of a Kotlin suspending function. */
    private static final String SUSPENDED = "kotlin.coroutines.Continuation";
    /** Answers that are not a value or a stage: refused on every runtime. */
    private static final java.util.Set<String> STREAMS = java.util.Set.of("io.smallrye.mutiny.Uni", "io.smallrye.mutiny.Multi",
            "org.jboss.resteasy.reactive.RestMulti", "org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher");

    /**
     * Whether Quarkus REST runs the method on its event loop, by its rules: {@code @Blocking} or
     * {@code @RunOnVirtualThread} (a worker) or {@code @NonBlocking} (the event loop) on the method, else on the class
     * that declares it; else {@code @Transactional} (a worker); else a stage or a stream returned, or a Kotlin suspending
     * function (the event loop). A default set on the application's {@code Application} class, and return types that
     * other extensions declare non-blocking, are not seen: annotate the method.
     */
    static boolean onEventLoop(Method method) {
        for (java.lang.reflect.AnnotatedElement where : new java.lang.reflect.AnnotatedElement[] {method, method.getDeclaringClass()}) {
            if (annotated(where, BLOCKING) || annotated(where, VIRTUAL_THREAD)) {
                return false;
            }
            if (annotated(where, NON_BLOCKING)) {
                return true;
            }
        }
        if (annotated(method, TRANSACTIONAL) || annotated(method.getDeclaringClass(), TRANSACTIONAL)) {
            return false;
        }
        String returned = method.getReturnType().getName();
        Class<?>[] parameters = method.getParameterTypes();
        return STAGES.contains(returned) || STREAMS.contains(returned)
                || parameters.length > 0 && parameters[parameters.length - 1].getName().equals(SUSPENDED);
    }

    private static boolean annotated(java.lang.reflect.AnnotatedElement where, String annotation) {
        for (java.lang.annotation.Annotation a : where.getAnnotations()) {
            if (a.annotationType().getName().equals(annotation)) {
                return true;
            }
        }
        return false;
    }

    /** The filter as a request filter only. */
    public static final class RequestSide implements ContainerRequestFilter {
        private final IdempotencyHttpFilter filter;

        RequestSide(IdempotencyHttpFilter filter) {
            this.filter = filter;
        }

        @Override
        public void filter(ContainerRequestContext request) throws IOException {
            filter.filter(request);
        }
    }

    /** The filter as a response filter only. */
    public static final class ResponseSide implements ContainerResponseFilter {
        private final IdempotencyHttpFilter filter;

        ResponseSide(IdempotencyHttpFilter filter) {
            this.filter = filter;
        }

        @Override
        public void filter(ContainerRequestContext request, ContainerResponseContext response) {
            filter.filter(request, response);
        }
    }

    /**
     * The first response filter of a resource that answers later: it notes that the runtime began to process the answer,
     * so that the claim is settled if an application's filter after it throws and the library's never runs.
     */
    public static final class AnswerSide implements ContainerResponseFilter {
        private final IdempotencyHttpFilter filter;

        AnswerSide(IdempotencyHttpFilter filter) {
            this.filter = filter;
        }

        @Override
        public void filter(ContainerRequestContext request, ContainerResponseContext response) {
            filter.answering(request);
        }
    }

    /** The filter as a writer interceptor only. */
    public static final class WriterSide implements WriterInterceptor {
        private final IdempotencyHttpFilter filter;

        WriterSide(IdempotencyHttpFilter filter) {
            this.filter = filter;
        }

        @Override
        public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
            filter.aroundWriteTo(context);
        }
    }
}
