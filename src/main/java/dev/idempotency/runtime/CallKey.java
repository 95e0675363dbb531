package dev.idempotency.runtime;

import dev.idempotency.IdempotencyKeys;
import dev.idempotency.spi.ScopedKey;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Callable;

/**
 * Tells {@link IdempotencyKeys#derive} which call's work runs on this thread: each door runs its work through
 * {@link #during}, which puts the outer call's key back when the work ends, however it ends.
 */
public final class CallKey {

    /** {@code IdempotencyKeys.enter}: private, so that only the library's doors set it. */
    private static final MethodHandle ENTER;

    static {
        try {
            ENTER = MethodHandles.privateLookupIn(IdempotencyKeys.class, MethodHandles.lookup())
                    .findStatic(IdempotencyKeys.class, "enter", MethodType.methodType(ScopedKey.class, ScopedKey.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CallKey() {
    }

    /** Runs the call's work with its key as the one derived keys come from. */
    public static <T> T during(ScopedKey key, Callable<T> work) throws Exception {
        ScopedKey outer = enter(key);
        try {
            return work.call();
        } finally {
            enter(outer);
        }
    }

    private static ScopedKey enter(ScopedKey key) {
        try {
            return (ScopedKey) ENTER.invokeExact(key);
        } catch (Throwable e) {
            throw new IllegalStateException("Could not note the call's key", e);
        }
    }
}
