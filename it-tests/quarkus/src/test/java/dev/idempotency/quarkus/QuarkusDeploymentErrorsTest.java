package dev.idempotency.quarkus;

import dev.idempotency.quarkus.misused.NoKey;
import dev.idempotency.quarkus.misused.OnTheEventLoop;

import io.quarkus.test.QuarkusUnitTest;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Mistakes fail the application's start on Quarkus, with the messages the Jakarta EE servers give. */
class QuarkusDeploymentErrorsTest {

    /**
     * The library's packages in the application itself: left on the class path, a small application of a few classes
     * loads them outside Quarkus's class loader, which cannot then reach their members.
     */
    private static org.jboss.shrinkwrap.api.spec.JavaArchive library(org.jboss.shrinkwrap.api.spec.JavaArchive jar) {
        // Every package of the library, whatever its rooms, but not this module's own classes (dev.idempotency.quarkus),
        // nor the readiness check: this application has no MicroProfile Health (the library adds it only where there is).
        jar.addPackages(true, c -> !c.get().contains("ReadinessCheck") && !c.get().startsWith("/dev/idempotency/quarkus/"),
                "dev.idempotency");
        return jar.addAsServiceProvider(jakarta.enterprise.inject.build.compatible.spi.BuildCompatibleExtension.class,
                dev.idempotency.cdi.IdempotencyBuildCompatibleExtension.class);
    }

    private static String trace(Throwable t) {
        StringWriter text = new StringWriter();
        t.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    @Nested
    class AnIdempotentMethodWithoutAKey {
        @RegisterExtension
        static final QuarkusUnitTest APP = new QuarkusUnitTest()
                .withApplicationRoot(jar -> library(jar).addClasses(NoKey.class)).withConfigurationResource("application.properties")
                .overrideConfigKey("misused", "no-key")
                .assertException(t -> {
                    String trace = trace(t);
                    assertTrue(trace.contains(NoKey.class.getName() + "#charge"), trace);
                    assertTrue(trace.contains("has no key: mark the parameter that carries the client's key with @IdempotencyKey"), trace);
                });

        @Test
        void doesNotStart() {
            fail("the application started");
        }
    }

    @Nested
    class AnIdempotentResourceOnTheEventLoop {
        @RegisterExtension
        static final QuarkusUnitTest APP = new QuarkusUnitTest()
                .withApplicationRoot(jar -> library(jar).addClasses(OnTheEventLoop.class)).withConfigurationResource("application.properties")
                .overrideConfigKey("misused", "event-loop")
                .assertException(t -> {
                    String trace = trace(t);
                    assertTrue(trace.contains(OnTheEventLoop.class.getName() + "#pay is @Idempotent and runs on Quarkus REST's event loop"), trace);
                });

        @Test
        void doesNotStart() {
            fail("the application started");
        }
    }

    @Nested
    class AnIdempotentResourceAnsweringAUni {
        @RegisterExtension
        static final QuarkusUnitTest APP = new QuarkusUnitTest()
                .withApplicationRoot(jar -> library(jar).addClasses(dev.idempotency.quarkus.misused.AUni.class))
                .withConfigurationResource("application.properties")
                .overrideConfigKey("misused", "uni")
                .assertException(t -> {
                    String trace = trace(t);
                    assertTrue(trace.contains(dev.idempotency.quarkus.misused.AUni.class.getName() + "#pay is @Idempotent and returns a Uni"), trace);
                });

        @Test
        void doesNotStart() {
            fail("the application started");
        }
    }

    @Nested
    class AnIdempotentResourceOfANonBlockingClass {
        @RegisterExtension
        static final QuarkusUnitTest APP = new QuarkusUnitTest()
                .withApplicationRoot(jar -> library(jar).addClasses(dev.idempotency.quarkus.misused.NonBlockingClass.class))
                .withConfigurationResource("application.properties")
                .overrideConfigKey("misused", "non-blocking-class")
                .assertException(t -> {
                    String trace = trace(t);
                    assertTrue(trace.contains("NonBlockingClass#pay is @Idempotent and runs on Quarkus REST's event loop"), trace);
                });

        @Test
        void doesNotStart() {
            fail("the application started");
        }
    }

    @Nested
    class AnInterceptorPriorityChangedAfterTheBuild {
        @RegisterExtension
        static final QuarkusUnitTest APP = new QuarkusUnitTest()
                .withApplicationRoot(jar -> library(jar))
                .withConfigurationResource("application.properties")
                .overrideRuntimeConfigKey("idempotency.interceptor.priority", "300")
                .assertException(t -> {
                    String trace = trace(t);
                    assertTrue(trace.contains("idempotency.interceptor.priority is 300 now, but the interceptor's priority was "
                            + "fixed at 1100 when the application was built"), trace);
                });

        @Test
        void doesNotStart() {
            fail("the application started");
        }
    }
}
