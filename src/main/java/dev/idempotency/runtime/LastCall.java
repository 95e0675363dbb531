package dev.idempotency.runtime;

import dev.idempotency.IdempotentResult;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Tells {@link IdempotentResult#ofLastCall()} what the call that just ended on this thread did. */
public final class LastCall {

    /** {@code IdempotentResult.remember}: private, so that only the library's doors set it. */
    private static final MethodHandle REMEMBER;

    static {
        try {
            REMEMBER = MethodHandles.privateLookupIn(IdempotentResult.class, MethodHandles.lookup())
                    .findStatic(IdempotentResult.class, "remember", MethodType.methodType(void.class, IdempotentResult.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private LastCall() {
    }

    /** The outcome of the call that just ended on this thread. */
    public static void remember(IdempotentResult<?> result) {
        try {
            REMEMBER.invoke(result);
        } catch (Throwable e) {
            throw new IllegalStateException("Could not note the outcome of the call", e);
        }
    }

    /** A call begins: until it ends well, there is no outcome to tell. */
    public static void forget() {
        remember(null);
    }
}
