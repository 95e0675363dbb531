package dev.idempotency.config;

import dev.idempotency.IdempotencyConfigurationException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Collects every configuration mistake found, so that a deployment reports them all at once. */
public final class ConfigErrors {

    private final List<IdempotencyConfigurationException> errors = new ArrayList<>();

    public void add(String message) {
        errors.add(new IdempotencyConfigurationException(message));
    }

    public void add(IdempotencyConfigurationException e) {
        errors.add(e);
    }

    public List<IdempotencyConfigurationException> all() {
        return Collections.unmodifiableList(errors);
    }

    public boolean isEmpty() {
        return errors.isEmpty();
    }

    /** Throws the first error (with the others suppressed) when there is any. */
    public void throwIfAny() {
        if (errors.isEmpty()) {
            return;
        }
        IdempotencyConfigurationException first = errors.get(0);
        errors.subList(1, errors.size()).forEach(first::addSuppressed);
        throw first;
    }
}
