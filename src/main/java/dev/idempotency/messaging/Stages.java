package dev.idempotency.messaging;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** What a consumer's returned stage says already. */
final class Stages {

    private Stages() {
    }

    /** The failure of a stage that already completed exceptionally; {@code null} for anything else (a stage still running too). */
    static Throwable failure(Object result) {
        if (!(result instanceof CompletionStage<?> stage)) {
            return null;
        }
        CompletableFuture<?> f;
        try {
            f = stage.toCompletableFuture();
        } catch (UnsupportedOperationException e) {
            return null; // a stage that cannot tell: taken as running
        }
        if (!f.isCompletedExceptionally()) {
            return null;
        }
        try {
            f.join();
            return null;
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        }
    }

    @SuppressWarnings("unchecked")
    static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
