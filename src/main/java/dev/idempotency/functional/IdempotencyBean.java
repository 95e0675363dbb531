package dev.idempotency.functional;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyOptions;
import dev.idempotency.IdempotentResult;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.concurrent.Callable;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;

/** The injectable {@link Idempotency}: the configured defaults, and {@link #with} for others. */
@ApplicationScoped
public class IdempotencyBean implements Idempotency {

    @Inject
    IdempotencyRuntime runtime;

    @Inject
    Callers callers;

    private volatile FunctionalIdempotency defaults;

    private FunctionalIdempotency defaults() {
        FunctionalIdempotency d = defaults;
        if (d == null) {
            d = defaults = new FunctionalIdempotency(runtime, callers, IdempotencyOptions.DEFAULTS);
        }
        return d;
    }

    @Override
    public <R> R call(String namespace, String key, Object request, Class<R> resultType, Callable<R> work) throws Exception {
        return defaults().call(namespace, key, request, resultType, work);
    }

    @Override
    public <R> IdempotentResult<R> execute(String namespace, String key, Object request, Class<R> resultType, Callable<R> work)
            throws Exception {
        return defaults().execute(namespace, key, request, resultType, work);
    }

    @Override
    public Idempotency with(IdempotencyOptions options) {
        return defaults().with(options);
    }
}
