package dev.idempotency.quarkus;

import dev.idempotency.openapi.checks.OpenApiDocument;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Quarkus's OpenAPI document ({@code /q/openapi}, built by SmallRye OpenAPI at build time), with the library's filter,
 * which the library registers itself: the guarded operations as configured, the unguarded one untouched, the document
 * valid (swagger-parser).
 */
@QuarkusTest
class QuarkusOpenApiTest {

    @TestHTTPResource("/q/openapi")
    URI openapi;

    @Test
    @DisplayName("the document is valid; a required key (max 100, an expiry header), an optional one; the unguarded read untouched")
    void theDocumentDescribesTheGuardedOperations() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(openapi + "?format=json"))
                .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        OpenApiDocument.assertDocumentedResource(OpenApiDocument.parse(r.body()));
    }
}
