package dev.idempotency.helidon;

import jakarta.enterprise.inject.se.SeContainer;
import jakarta.enterprise.inject.se.SeContainerInitializer;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool whose connections are out of auto-commit fails the application's start, saying so: Helidon's JTA adapter
 * enlists no such connection, so no claim could ever be written. In a JVM of its own (the pom's pool-errors execution
 * sets the pool's autoCommit to false).
 */
class HelidonPoolOutOfAutoCommitTest {

    @Test
    void thePoolOutOfAutoCommitFailsTheStart() {
        Throwable refused = assertThrows(Throwable.class, () -> {
            try (SeContainer started = SeContainerInitializer.newInstance().initialize()) {
                started.getBeanManager(); // not reached
            }
        }, "the application started");
        StringWriter text = new StringWriter();
        refused.printStackTrace(new PrintWriter(text));
        String trace = text.toString();
        assertTrue(trace.contains("hands out connections out of auto-commit, and Helidon's JTA adapter enlists only "
                + "connections in auto-commit: leave the pool's autoCommit at true"), trace);
    }
}
