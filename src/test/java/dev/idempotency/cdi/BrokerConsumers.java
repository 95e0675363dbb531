package dev.idempotency.cdi;

import com.arjuna.ats.jta.cdi.TransactionExtension;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;
import io.smallrye.config.inject.ConfigExtension;
import io.smallrye.reactive.messaging.providers.MediatorFactory;
import io.smallrye.reactive.messaging.providers.connectors.ExecutionHolder;
import io.smallrye.reactive.messaging.providers.connectors.WorkerPoolRegistry;
import io.smallrye.reactive.messaging.providers.extension.ChannelProducer;
import io.smallrye.reactive.messaging.providers.extension.HealthCenter;
import io.smallrye.reactive.messaging.providers.extension.MediatorManager;
import io.smallrye.reactive.messaging.providers.extension.ReactiveMessagingExtension;
import io.smallrye.reactive.messaging.providers.impl.ConfiguredChannelFactory;
import io.smallrye.reactive.messaging.providers.impl.ConnectorFactories;
import io.smallrye.reactive.messaging.providers.impl.InternalChannelRegistry;
import io.smallrye.reactive.messaging.providers.wiring.Wiring;

import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.jboss.weld.environment.se.WeldContainer;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SmallRye Reactive Messaging in Weld with the library, on H2 with Narayana, its channels on a real broker's connector:
 * the channels' configuration as system properties (SmallRye reads the global configuration), the library's beside.
 */
final class BrokerConsumers implements AutoCloseable {

    /** SmallRye Reactive Messaging's own beans, as Weld SE needs them listed (discovery is off). */
    static final Class<?>[] REACTIVE_MESSAGING = {MediatorFactory.class, MediatorManager.class, InternalChannelRegistry.class,
            ConnectorFactories.class, ConfiguredChannelFactory.class, ChannelProducer.class, ExecutionHolder.class,
            WorkerPoolRegistry.class, HealthCenter.class, Wiring.class};

    private final Map<String, String> channelProperties;
    private final WeldContainer container;

    /**
     * Starts the consumers with claims in {@code claim} mode.
     *
     * @param channelProperties the channels' and the connector's configuration (the library reads each channel's
     *                          connector from it too)
     * @param more              more of the library's configuration
     * @param beans             the consumers, the beans they use, the connector and its beans
     */
    BrokerConsumers(String claim, Map<String, String> channelProperties, Map<String, String> more, Class<?>... beans) {
        this.channelProperties = Map.copyOf(channelProperties);
        this.channelProperties.forEach(System::setProperty);
        JtaInterceptorContract.current = TestDatabase.H2;
        Map<String, String> config = new HashMap<>(channelProperties);
        config.put("idempotency.claim", claim);
        config.putAll(more);
        JtaEnvironment.HIBERNATE_JTA.forEach((k, v) -> config.put("idempotency.jpa." + k, v));
        container = IdempotencyWeld.weld(config, JtaInterceptorContract.Resources.class)
                .addBeanClasses(beans)
                .addBeanClasses(REACTIVE_MESSAGING)
                .addExtension(new TransactionExtension())
                .addExtension(new ReactiveMessagingExtension())
                .addExtension(new ConfigExtension())
                .initialize();
    }

    WeldContainer container() {
        return container;
    }

    <T> T bean(Class<T> type) {
        return container.select(type).get();
    }

    /** Stops the consumers (their connections close: the broker takes back what they did not acknowledge). */
    @Override
    public void close() {
        container.close();
        channelProperties.keySet().forEach(System::clearProperty);
        releaseGlobalConfig();
    }

    /**
     * SmallRye Reactive Messaging reads the global configuration (the channels' system properties), which registers it
     * for this class loader: released, so that the next test may register its own.
     */
    static void releaseGlobalConfig() {
        ConfigProviderResolver resolver = ConfigProviderResolver.instance();
        resolver.releaseConfig(resolver.getConfig(Thread.currentThread().getContextClassLoader()));
    }

    /** Waits, polling, until the condition holds (30 s at most), then asserts it with what was seen. */
    static void await(String what, BooleanSupplier condition, Supplier<String> seen) throws InterruptedException {
        await(what, 30, condition, seen);
    }

    /** Waits, polling, until the condition holds ({@code seconds} at most), then asserts it with what was seen. */
    static void await(String what, int seconds, BooleanSupplier condition, Supplier<String> seen) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within " + seconds + " s; seen: " + seen.get()).isLessThan(deadline);
            Thread.sleep(100); // polling what the consumers and the broker report
        }
    }
}
