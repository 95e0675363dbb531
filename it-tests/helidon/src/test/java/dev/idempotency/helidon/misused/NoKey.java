package dev.idempotency.helidon.misused;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;

/** An {@code @Idempotent} method with no key: the application that holds it must not start. Not in the tested application. */
@ApplicationScoped
public class NoKey {

    @Idempotent
    public String charge(String reference, long amount) {
        return reference;
    }
}
