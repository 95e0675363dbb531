package dev.idempotency.openapi;

import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.Map;
import java.util.Set;

/**
 * Registers the library's OpenAPI filter ({@code mp.openapi.filter}) at the lowest ordinal, so that an application needs
 * no configuration for it, and any value of its own (a filter of its own, or none) wins. Quarkus reads that key when it
 * builds the application, from its own files only: there the application names the filter itself. Names the filter by its class
 * name only: this source loads on runtimes without MicroProfile OpenAPI too.
 */
public final class OpenApiFilterSource implements ConfigSource {

    static final String FILTER_KEY = "mp.openapi.filter";
    static final String FILTER = "dev.idempotency.openapi.IdempotencyOASFilter";

    @Override
    public Map<String, String> getProperties() {
        return Map.of(FILTER_KEY, FILTER);
    }

    @Override
    public Set<String> getPropertyNames() {
        return Set.of(FILTER_KEY);
    }

    @Override
    public String getValue(String propertyName) {
        return FILTER_KEY.equals(propertyName) ? FILTER : null;
    }

    @Override
    public String getName() {
        return "idempotency-jakarta (its OpenAPI filter)";
    }

    @Override
    public int getOrdinal() {
        return 1;
    }
}
