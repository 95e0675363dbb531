package dev.idempotency.testing;

import dev.idempotency.core.AtomicCall;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/** An atomic call whose result is text, stored as UTF-8; no failure is kept, or one type's, its message stored. */
public final class TextCall implements AtomicCall<String> {

    private final Callable<String> body;
    private final Class<? extends Throwable> kept;

    private TextCall(Callable<String> body, Class<? extends Throwable> kept) {
        this.body = body;
        this.kept = kept;
    }

    public static TextCall of(Callable<String> body) {
        return new TextCall(body, null);
    }

    /** A call that keeps failures of this type as its answer (their message). */
    public static TextCall keeping(Class<? extends Throwable> kept, Callable<String> body) {
        return new TextCall(body, kept);
    }

    @Override
    public String run() throws Exception {
        return body.call();
    }

    @Override
    public byte[] response(String result) {
        return result.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean keeps(Throwable failure) {
        return kept != null && kept.isInstance(failure);
    }

    @Override
    public byte[] failure(Throwable failure) {
        if (!keeps(failure)) {
            throw new AssertionError("no such failure is kept");
        }
        return failure.getMessage().getBytes(StandardCharsets.UTF_8);
    }
}
