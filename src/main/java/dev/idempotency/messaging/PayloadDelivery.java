package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.Delivery;

import jakarta.interceptor.InvocationContext;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A consumer that takes the payload: the connector answers its message from what the call returns (a value or a
 * completed stage acknowledges it, a failure refuses it). A duplicate is acknowledged without running, its first
 * delivery's work being done; a kept failure too, unless {@code keptFailures=nack}, which fails it as its first did.
 */
record PayloadDelivery(MethodSettings.Incoming incoming) implements Delivery {

    @Override
    public void prepare(InvocationContext ctx) {
    }

    @Override
    public void attempt() {
    }

    @Override
    public Object ran(Object result) throws Exception {
        Throwable failed = Stages.failure(result);
        if (failed != null) {
            throw Stages.<Exception>sneaky(failed); // a stage that already failed is the call's failure
        }
        return result;
    }

    @Override
    public void returned() {
    }

    @Override
    public Object answer(Object kept) {
        return kept != null || !incoming.returnsStage() ? kept : CompletableFuture.completedFuture(null);
    }

    @Override
    public Object duplicate(Supplier<Throwable> keptFailure) throws Exception {
        Throwable failure = incoming.nackKeptFailures() ? keptFailure.get() : null;
        if (failure != null) {
            if (incoming.returnsStage()) {
                return CompletableFuture.failedFuture(failure);
            }
            throw Stages.<Exception>sneaky(failure);
        }
        return incoming.returnsStage() ? CompletableFuture.completedFuture(null) : null;
    }

    @Override
    public Object refused(Exception failure) throws Exception {
        throw failure;
    }

    @Override
    public Object withoutKey(InvocationContext ctx) throws Exception {
        return ctx.proceed();
    }
}
