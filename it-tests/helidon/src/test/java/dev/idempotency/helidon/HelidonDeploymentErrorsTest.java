package dev.idempotency.helidon;

import dev.idempotency.helidon.misused.NoKey;

import jakarta.enterprise.inject.se.SeContainer;
import jakarta.enterprise.inject.se.SeContainerInitializer;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mistake fails the start of a Helidon MP application with the message the Jakarta EE servers give. In a JVM of its
 * own (the pom's deployment-errors execution): Helidon starts one container per JVM.
 */
class HelidonDeploymentErrorsTest {

    @Test
    void anIdempotentMethodWithoutAKeyFailsTheStart() {
        // Helidon's own start (Main, Server) takes its beans from the class path only; its SeContainerInitializer, which
        // the pom allows for this test (mp.initializer.allow), takes the misused class too
        Throwable refused = assertThrows(Throwable.class, () -> {
            try (SeContainer started = SeContainerInitializer.newInstance().addBeanClasses(NoKey.class).initialize()) {
                started.getBeanManager(); // not reached
            }
        }, "the application started");
        StringWriter text = new StringWriter();
        refused.printStackTrace(new PrintWriter(text));
        String trace = text.toString();
        assertTrue(trace.contains(NoKey.class.getName() + "#charge"), trace);
        assertTrue(trace.contains("has no key: mark the parameter that carries the client's key with @IdempotencyKey"), trace);
    }
}
