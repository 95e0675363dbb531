package dev.idempotency.it;

import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Prints every skipped test with its reason to the build's log, where the counts alone ("Skipped: 2") would leave a
 * reader guessing which test a server cannot run and why (a test skipped on a server says so: for example, no
 * MicroProfile Metrics in GlassFish 8). Registered through META-INF/services for the in-server tests' JVM.
 */
public class SkipReasons implements TestExecutionListener {

    @Override
    public void executionSkipped(TestIdentifier test, String reason) {
        System.out.println("SKIPPED on " + System.getProperty("server.name", "this server") + ": " + test.getLegacyReportingName()
                + " (" + test.getDisplayName() + "): " + reason);
    }
}
