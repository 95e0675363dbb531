package dev.idempotency.runtime;

import dev.idempotency.IdempotencyKeys;
import dev.idempotency.spi.ScopedKey;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * Tells {@link IdempotencyKeys#derive} which call's work runs on this thread: each door runs its work through
 * {@link #during}, which puts the outer call's key back when the work ends, however it ends.
 */
public final class CallKey {

    /** {@code IdempotencyKeys.enter} and {@code enterUnprotected}: private, so that only the library's doors set them. */
    private static final MethodHandle ENTER;
    private static final MethodHandle ENTER_UNPROTECTED;

    static {
        try {
            MethodHandles.Lookup keys = MethodHandles.privateLookupIn(IdempotencyKeys.class, MethodHandles.lookup());
            ENTER = keys.findStatic(IdempotencyKeys.class, "enter", MethodType.methodType(Supplier.class, Supplier.class));
            ENTER_UNPROTECTED = keys.findStatic(IdempotencyKeys.class, "enterUnprotected", MethodType.methodType(Supplier.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CallKey() {
    }

    /** Runs the call's work with its key as the one derived keys come from. */
    public static <T> T during(ScopedKey key, Callable<T> work) throws Exception {
        return restoring(enter(key::id), work); // the digest is taken only if the work derives a key
    }

    /**
     * Runs the work of a call that runs unprotected (no key where it is optional, idempotency off for the method): the
     * keys of the messages it sends are its own, not an outer call's.
     */
    @SuppressWarnings("unchecked")
    public static <T> T unprotected(Callable<T> work) throws Exception {
        Supplier<String> outer;
        try {
            outer = (Supplier<String>) ENTER_UNPROTECTED.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("Could not note the call's key", e);
        }
        return restoring(outer, work);
    }

    /** Runs the work, then puts the outer call's key back, however the work ends. */
    private static <T> T restoring(Supplier<String> outer, Callable<T> work) throws Exception {
        try {
            return work.call();
        } finally {
            enter(outer);
        }
    }

    @SuppressWarnings("unchecked")
    private static Supplier<String> enter(Supplier<String> call) {
        try {
            return (Supplier<String>) ENTER.invokeExact(call);
        } catch (Throwable e) {
            throw new IllegalStateException("Could not note the call's key", e);
        }
    }
}
