package dev.idempotency.jaxrs;

import dev.idempotency.runtime.RequestEnd;

import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.CompletionCallback;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Follows an answer that comes later, on another thread, to its end: when the runtime has processed it and the library's
 * response filter or writer never saw it (an application's response filter threw before the library's on that thread),
 * its claim is settled then, as the request's end settles one that answers at once; else the key would stay held while
 * its heartbeat renews the lease.
 *
 * <ul>
 * <li>A suspended response ({@code @Suspended AsyncResponse}): a {@link CompletionCallback}, which the runtime calls once
 *     the response was sent or failed; registered before the method runs, since the thread it hands the response to
 *     may resume it, and the runtime process the answer there, before the method returns.</li>
 * <li>A {@code CompletionStage}: the method returns a stage of the library's that completes with the resource's; the
 *     runtime's own processing of the answer hangs on it and runs, as RESTEasy and Jersey do, on the thread that completes
 *     it, before that completion returns. Settled there only if the runtime processed it on that very thread (its first
 *     response filter ran there); a runtime that processes it on another thread is left to the library's filters.</li>
 * </ul>
 * Only for a resource the container intercepts (a CDI bean, as JAX-RS resources are in an application with CDI): its
 * {@code @Idempotent} interceptor hands the method's arguments and result here.
 */
final class LaterAnswers {

    private LaterAnswers() {
    }

    /** How the request's end follows this claim's answer: hooked onto before the method runs, or when it returned. */
    static RequestEnd.Claims.AnswerWatcher watcher(RequestEnd.Claims end, Object claim) {
        return new RequestEnd.Claims.AnswerWatcher() {
            @Override
            public void before(Object[] arguments) {
                // Before the method runs: it may hand the response to a thread that resumes it, and the runtime may have
                // processed the answer there before the method returns; a callback registered after that is never called.
                for (Object a : arguments) {
                    if (a instanceof AsyncResponse response) {
                        response.register((CompletionCallback) failure -> end.settleLeftOpen(claim));
                        return;
                    }
                }
            }

            @Override
            public Object returned(Object[] arguments, Object result) {
                // a suspended response's method returns nothing: it is followed since before the call
                return result instanceof CompletionStage<?> stage ? follow(end, claim, stage) : result;
            }
        };
    }

    /** A stage of the library's that completes with the resource's; its answer settled where the runtime processed it. */
    private static CompletionStage<Object> follow(RequestEnd.Claims end, Object claim, CompletionStage<?> stage) {
        CompletableFuture<Object> answer = new CompletableFuture<>();
        stage.whenComplete((value, failure) -> {
            if (failure != null) {
                answer.completeExceptionally(failure);
            } else {
                answer.complete(value);
            }
            if (end.answeredHere(claim)) { // processed on this thread, within complete(): over by now
                end.settleLeftOpen(claim);
            }
        });
        return answer;
    }
}
