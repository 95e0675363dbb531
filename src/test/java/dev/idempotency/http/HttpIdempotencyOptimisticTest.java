package dev.idempotency.http;

import java.util.Map;

/** The HTTP rules with optimistic claims ({@code idempotency.claim=optimistic}); the assertions are in HttpIdempotencyTest. */
class HttpIdempotencyOptimisticTest extends HttpIdempotencyTest {

    @Override
    Map<String, String> config() {
        Map<String, String> config = super.config();
        config.put("idempotency.claim", "optimistic");
        return config;
    }
}
