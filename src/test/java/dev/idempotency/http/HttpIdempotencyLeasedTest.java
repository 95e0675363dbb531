package dev.idempotency.http;

import java.util.Map;

/** SPEC section 3 with leased claims ({@code idempotency.claim=leased}): every rule as before atomic claims; the assertions are in HttpIdempotencyTest. */
class HttpIdempotencyLeasedTest extends HttpIdempotencyTest {

    @Override
    Map<String, String> config() {
        Map<String, String> config = super.config();
        config.put("idempotency.claim", "leased");
        return config;
    }
}
