package dev.idempotency.cdi;

import dev.idempotency.testing.CdiLite;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.TestDatabase;



import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.junit5.WeldInitiator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import dev.idempotency.runtime.IdempotencyDeployment;

/**
 * The CDI + JTA path on H2 with the library's build compatible extension alone, as a CDI Lite container (Quarkus's ArC)
 * runs it: no portable extension, the configuration read from the application's MicroProfile Config. The
 * extension registers the beans and the interceptor with its priority (inside {@code @Transactional}), and the methods
 * are resolved when the application starts. The assertions are in JtaInterceptorContract.
 */
class H2BuildCompatibleInterceptorTest extends JtaInterceptorContract {

    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }

    /** A Weld with the build compatible extension alone; the configuration is the application's MicroProfile Config. */
    @Override
    Weld weld(Map<String, String> config, Class<?>... beans) {
        releaseConfig();
        ConfigProviderResolver.instance().registerConfig(IdempotencyWeld.config(config), Thread.currentThread().getContextClassLoader());
        return WeldInitiator.createWeld().addBeanClasses(beans).addBuildCompatibleExtensions(CdiLite.class);
    }

    @AfterEach
    void releaseConfig() {
        ConfigProviderResolver resolver = ConfigProviderResolver.instance();
        resolver.releaseConfig(resolver.getConfig(Thread.currentThread().getContextClassLoader()));
    }

    @Test
    void aMisusedAnnotationFailsTheStartWithThePortableExtensionsMessage() {
        container.close();
        container = null;
        Throwable failure = null;
        try (var ignored = weld(Map.of("idempotency.store", "memory"), DeploymentErrorsTest.NoKey.class).initialize()) {
            ignored.select(DeploymentErrorsTest.NoKey.class).get().charge("a", 1);
        } catch (RuntimeException e) {
            failure = e;
        }
        assertThat(failure).as("the start failed").isNotNull();
        java.io.StringWriter text = new java.io.StringWriter();
        failure.printStackTrace(new java.io.PrintWriter(text));
        assertThat(text.toString()).contains(DeploymentErrorsTest.NoKey.class.getName() + "#charge")
                .contains("has no key: mark the parameter that carries the client's key with @IdempotencyKey");
    }

    @Test
    void theBuildCompatibleExtensionServedThisContainerAlone() {
        assertThat(container.select(IdempotencyExtension.class).isResolvable()).as("no portable extension").isFalse();
        assertThat(container.select(IdempotencyDeployment.class).get().allSettings()).as("the methods were resolved").isNotEmpty();
    }
}
