package dev.idempotency.http;

import java.util.Map;

/** The {@code Idempotency-Key} header with leased claims ({@code idempotency.claim=leased}): every behaviour as before atomic claims; the assertions are in HttpIdempotencyTest. */
class HttpIdempotencyLeasedTest extends HttpIdempotencyTest {

    @Override
    Map<String, String> config() {
        Map<String, String> config = super.config();
        config.put("idempotency.claim", "leased");
        return config;
    }
}
