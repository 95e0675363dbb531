package dev.idempotency.runtime;

import dev.idempotency.config.MethodSettings;

/** The reader of a method whose key is an argument, or inside one: every {@code @Idempotent} method that takes no message. */
public record ParameterReader(MethodSettings method) implements CallReader {

    @Override
    public Object key(Object[] args) {
        return method.keyOf(args);
    }

    @Override
    public String noKey(Object[] args) {
        return method.keyInside() == null ? "its @IdempotencyKey parameter is null or blank"
                : "its key " + method.keyInside().description() + " is null or blank, or the parameter is null";
    }

    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        return codec.fingerprint(method, args);
    }
}
