package dev.idempotency.messaging;

import dev.idempotency.core.Fingerprint;
import dev.idempotency.runtime.JsonCodec;

import org.eclipse.microprofile.reactive.messaging.Message;

/** The fingerprint of what a consumer receives, whichever broker it came from. */
final class Payloads {

    private Payloads() {
    }

    /** SHA-256 over the namespace and the payload (a Message's, or the argument itself): text, bytes, or its JSON. */
    static String fingerprint(String namespace, Object argument, JsonCodec codec) {
        Object payload = argument instanceof Message<?> m ? m.getPayload() : argument;
        Fingerprint f = Fingerprint.start().add(namespace);
        if (payload == null) {
            f.add("null");
        } else if (payload instanceof byte[] bytes) {
            f.add("bytes").add(bytes);
        } else if (payload instanceof CharSequence text) {
            f.add("text").add(text.toString());
        } else {
            f.add("json").add(codec.canonical(payload, payload.getClass()));
        }
        return f.hex();
    }
}
