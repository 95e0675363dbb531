package dev.idempotency.testing;

import dev.idempotency.cdi.IdempotencyExtension;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;

import org.eclipse.microprofile.config.Config;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.junit5.WeldInitiator;

import java.util.HashMap;
import java.util.Map;

/**
 * Weld SE with the library's extension and a configuration of the test's own (never the global one), so
 * that every test states the configuration it runs with.
 */
public final class IdempotencyWeld {

    private IdempotencyWeld() {
    }

    public static Config config(Map<String, String> properties) {
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(new HashMap<>(properties), "test", 500))
                .build();
    }

    /** A Weld with discovery off, the extension, and the given beans. */
    public static Weld weld(Map<String, String> properties, Class<?>... beans) {
        return WeldInitiator.createWeld()
                .addExtension(new IdempotencyExtension(config(properties)))
                .addBeanClasses(beans);
    }

    /** For {@code @WeldSetup}: the in-memory store unless the properties say otherwise. */
    public static WeldInitiator memory(Map<String, String> properties, Class<?>... beans) {
        Map<String, String> p = new HashMap<>(properties);
        p.putIfAbsent("idempotency.store", "memory");
        return WeldInitiator.from(weld(p, beans)).build();
    }
}
