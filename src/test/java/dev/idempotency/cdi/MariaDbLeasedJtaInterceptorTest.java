package dev.idempotency.cdi;

import java.util.Map;

/** The same contract with leased claims (`idempotency.claim=leased`): what it did before atomic claims, unchanged; the assertions are in JtaInterceptorContract. */
class MariaDbLeasedJtaInterceptorTest extends MariaDbJtaInterceptorTest {
    @Override
    Map<String, String> claimConfig() {
        return Map.of("idempotency.claim", "leased");
    }
}
