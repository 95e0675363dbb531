package dev.idempotency.quarkus.misused;

import dev.idempotency.Idempotent;

import io.quarkus.arc.properties.IfBuildProperty;

import jakarta.enterprise.context.ApplicationScoped;

/** An {@code @Idempotent} method with no key: its application must not start. Only in the applications that ask for it. */
@IfBuildProperty(name = "misused", stringValue = "no-key")
@ApplicationScoped
public class NoKey {

    @Idempotent
    public String charge(String reference, long amount) {
        return reference;
    }
}
