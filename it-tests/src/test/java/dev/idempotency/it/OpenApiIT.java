package dev.idempotency.it;

import dev.idempotency.openapi.checks.OpenApiDocument;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

import java.io.File;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static dev.idempotency.openapi.checks.OpenApiDocument.operation;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's OpenAPI document as the server serves it ({@code /openapi}), parsed and validated with
 * swagger-parser: the example's {@code @Idempotent} operations carry the key header, the library's answers and the
 * replay markers exactly as configured (a required key and an optional one, a maximum length of 100, an expiry header
 * on one method only); unguarded operations carry none of it. The deployment's configuration has no OpenAPI line: the
 * library registers its filter itself.
 */
@DisabledIfSystemProperty(named = "server.name", matches = "glassfish",
        disabledReason = "GlassFish 8 has no MicroProfile OpenAPI")
class OpenApiIT extends ServerIT {

    static final String CONFIG = String.join("\n",
            "idempotency.max-key-length=100",
            "dev.idempotency.example.PaymentsResource/createOptimistic/Idempotent/required=false",
            "dev.idempotency.example.PaymentsResource/create/Idempotent/expiryHeader=Idempotency-Expires", "");

    @Deployment(testable = false)
    static WebArchive deployment() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, new File(System.getProperty("example.war")))
                .addAsResource(new StringAsset(CONFIG), "META-INF/microprofile-config.properties");
    }

    OpenAPI document() throws Exception {
        URI openapi = uri("").resolve("/openapi?format=JSON");
        HttpResponse<String> r = send(request("").uri(openapi).header("Accept", "application/json"));
        assertThat(r.statusCode()).as("GET " + openapi + ": " + r.body()).isEqualTo(200);
        return OpenApiDocument.parse(r.body());
    }

    @Test
    @DisplayName("the document is valid; a required key (max 100), an optional one, an expiry header on one method only")
    void guardedOperations() throws Exception {
        OpenAPI api = document();
        OpenApiDocument.assertGuarded(api, operation(api, "/api/payments", PathItem.HttpMethod.POST),
                true, 100, "201", "Idempotency-Expires");
        OpenApiDocument.assertGuarded(api, operation(api, "/api/payments/optimistic", PathItem.HttpMethod.POST),
                false, 100, "201", null);
        assertThat(operation(api, "/api/payments", PathItem.HttpMethod.POST).getResponses().get("201").getDescription())
                .as("the application's own description stays").isEqualTo("The payment, charged; Location names it");
    }

    /**
     * A client that knows the API only from the document: it sends the key in the header the document names, retries,
     * and finds on the replay every header the document declares for that status; a new request under the same key is
     * answered with the status and media type the document declares for a reused key.
     */
    @Test
    @DisplayName("a client driven by the document: the key header it names, the replay's declared headers, the declared 422")
    void aClientDrivenByTheDocument() throws Exception {
        OpenAPI api = document();
        Operation create = operation(api, "/api/payments", PathItem.HttpMethod.POST);
        String header = OpenApiDocument.keyHeader(create).getName();
        String key = java.util.UUID.randomUUID().toString();
        String path = "api/payments";
        String payment = "{\"amount\":1200,\"currency\":\"EUR\",\"reference\":\"openapi-client\"}";

        HttpResponse<String> first = send(request(path).header("Content-Type", "application/json").header(header, key)
                .POST(HttpRequest.BodyPublishers.ofString(payment)));
        HttpResponse<String> retry = send(request(path).header("Content-Type", "application/json").header(header, key)
                .POST(HttpRequest.BodyPublishers.ofString(payment)));
        assertThat(create.getResponses()).containsKey(String.valueOf(first.statusCode()));
        assertThat(retry.statusCode()).isEqualTo(first.statusCode());
        for (String declared : create.getResponses().get(String.valueOf(retry.statusCode())).getHeaders().keySet()) {
            assertThat(retry.headers().firstValue(declared)).as("the replay carries the declared " + declared).isPresent();
        }
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");

        HttpResponse<String> reused = send(request(path).header("Content-Type", "application/json").header(header, key)
                .POST(HttpRequest.BodyPublishers.ofString(payment.replace("1200", "1300"))));
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(create.getResponses().get("422").getContent()).containsOnlyKeys(
                reused.headers().firstValue("Content-Type").orElseThrow().split(";")[0].strip());
    }

    @Test
    @DisplayName("unguarded operations carry nothing of the library")
    void unguardedOperations() throws Exception {
        OpenAPI api = document();
        OpenApiDocument.assertUnguarded(operation(api, "/api/payments/{id}", PathItem.HttpMethod.GET));
        OpenApiDocument.assertUnguarded(operation(api, "/api/payments/unprotected", PathItem.HttpMethod.POST));
        assertThat(operation(api, "/api/payments/{id}", PathItem.HttpMethod.GET).getResponses().get("200").getDescription())
                .isEqualTo("The payment");
    }
}
