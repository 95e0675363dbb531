package dev.idempotency.http;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * An HTTP test class with one server for all its tests: the subclass starts it in its {@code @BeforeAll}
 * ({@code server = HttpTestServer.onH2(...)}); it is stopped after the class, and the counters start at zero in each test.
 */
abstract class OneServerTest {

    static HttpTestServer server;

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    @BeforeEach
    void resetCounters() {
        Counters.reset();
    }
}
