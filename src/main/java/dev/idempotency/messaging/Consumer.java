package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.Delivery;
import dev.idempotency.runtime.JsonCodec;

/**
 * The reader of an {@code @Incoming} method (MicroProfile Reactive Messaging): its key and fingerprint from the broker's
 * reader (or from its payload, where the key is inside it), and a delivery by the method's shape: a method that takes
 * the {@code Message} has it acknowledged after its transaction ({@link MessageDelivery}); one that takes the payload is
 * answered by the connector from what the call returns ({@link PayloadDelivery}).
 */
record Consumer(CallReader keys, MethodSettings method) implements CallReader {

    @Override
    public Object key(Object[] args) {
        return keys.key(args);
    }

    @Override
    public String noKey(Object[] args) {
        return keys.noKey(args);
    }

    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        return keys.fingerprint(args, codec);
    }

    @Override
    public Delivery delivery(Object[] args, java.util.function.Supplier<Object> transactionRegistry) {
        MethodSettings.Incoming incoming = method.incoming();
        return incoming.takesMessage() ? new MessageDelivery(args[0], transactionRegistry.get(), method)
                : new PayloadDelivery(incoming);
    }
}
