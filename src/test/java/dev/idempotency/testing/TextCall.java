package dev.idempotency.testing;

import dev.idempotency.core.AtomicCall;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/** An atomic call whose result is text, stored as UTF-8; no failure is kept. */
public final class TextCall implements AtomicCall<String> {

    private final Callable<String> body;

    private TextCall(Callable<String> body) {
        this.body = body;
    }

    public static TextCall of(Callable<String> body) {
        return new TextCall(body);
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
        return false;
    }

    @Override
    public byte[] failure(Throwable failure) {
        throw new AssertionError("no failure is kept");
    }
}
