package dev.idempotency.jaxrs;

import dev.idempotency.runtime.RequestEnd;

import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.CompletionCallback;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;

/**
 * Follows an answer that comes later, on another thread, to its end: when the runtime has processed it and the library's
 * response filter or writer never saw it (an application's response filter threw before the library's on that thread),
 * its claim is settled then, as the request's end settles one that answers at once; else the key would stay held while
 * its heartbeat renews the lease.
 *
 * <ul>
 * <li>A suspended response ({@code @Suspended AsyncResponse}): a {@link CompletionCallback}, which the runtime calls once
 *     the response was sent or failed.</li>
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

    /** What the request's end calls when the resource method returned, for this claim. */
    static BiFunction<Object[], Object, Object> watcher(RequestEnd.Claims end, Object claim) {
        return (arguments, result) -> watch(end, claim, arguments, result);
    }

    private static Object watch(RequestEnd.Claims end, Object claim, Object[] arguments, Object result) {
        for (Object a : arguments) {
            if (a instanceof AsyncResponse response) {
                response.register((CompletionCallback) failure -> end.settleLeftOpen(claim));
                return result;
            }
        }
        if (result instanceof CompletionStage<?> stage) {
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
        return result;
    }
}
