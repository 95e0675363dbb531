package dev.idempotency.helidon;

import dev.idempotency.openapi.checks.OpenApiDocument;

import io.helidon.microprofile.testing.junit5.HelidonTest;
import jakarta.inject.Inject;
import jakarta.ws.rs.client.WebTarget;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Helidon MP's OpenAPI document ({@code /openapi}), with the library's filter, which the library registers itself: the
 * guarded operations as configured, the unguarded one untouched, the document valid (swagger-parser).
 */
@HelidonTest
class HelidonOpenApiTest {

    @Inject
    WebTarget server;

    @Test
    @DisplayName("the document is valid; a required key (max 100, an expiry header), an optional one; the unguarded read untouched")
    void theDocumentDescribesTheGuardedOperations() throws Exception {
        URI openapi = server.path("openapi").queryParam("format", "JSON").getUri();
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(openapi)
                .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        OpenApiDocument.assertDocumentedResource(OpenApiDocument.parse(r.body()));
    }
}
