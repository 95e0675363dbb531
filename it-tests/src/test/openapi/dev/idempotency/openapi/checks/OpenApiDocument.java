package dev.idempotency.openapi.checks;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every runtime's served OpenAPI document must say about a guarded operation and an unguarded one, checked on the
 * document as swagger-parser reads it. Compiled by the in-server, Quarkus and Helidon tests alike.
 */
public final class OpenApiDocument {

    public static final String PROBLEM = "application/problem+json";
    public static final String PROBLEM_REF = "#/components/schemas/IdempotencyProblem";

    private OpenApiDocument() {
    }

    /**
     * The served document (JSON), parsed; its paths and components, where the library writes, must be valid. What the
     * parser says of the runtime's own top-level parts is not the library's: WildFly 39 serves an empty license and
     * external documentation object ({@code info.license.name}, {@code externalDocs.url} missing), Payara Micro adds a
     * top-level {@code endpoints} member of its own.
     */
    public static OpenAPI parse(String json) {
        ParseOptions options = new ParseOptions();
        options.setResolve(false);
        SwaggerParseResult parsed = new OpenAPIV3Parser().readContents(json, null, options);
        assertThat(parsed.getOpenAPI()).as("the served document parses: " + parsed.getMessages()).isNotNull();
        List<String> messages = parsed.getMessages() == null ? List.of() : parsed.getMessages();
        assertThat(messages).as("the served document's paths and components are valid")
                .allMatch(m -> RUNTIMES_OWN.stream().anyMatch(m::startsWith));
        return parsed.getOpenAPI();
    }

    /** The parser's messages on parts of the document the runtime writes and the library never touches. */
    static final List<String> RUNTIMES_OWN = List.of("attribute info.", "attribute externalDocs.", "attribute endpoints is unexpected");

    /** The operation whose path ends with {@code path} (a runtime may put the context root in the paths or in servers). */
    public static Operation operation(OpenAPI api, String path, PathItem.HttpMethod verb) {
        List<Map.Entry<String, PathItem>> items = api.getPaths().entrySet().stream()
                .filter(e -> e.getKey().endsWith(path)).toList();
        assertThat(items).as("one path ending with " + path + " in " + api.getPaths().keySet()).hasSize(1);
        Operation op = items.get(0).getValue().readOperationsMap().get(verb);
        assertThat(op).as(verb + " " + path).isNotNull();
        return op;
    }

    /**
     * A guarded operation as configured: the key header (required or not, 1 to {@code maxLength} characters); 400, 409
     * (with Retry-After), 413, 422 and 503 as problem+json; on its {@code kept} response the replay marker, and the
     * expiry header exactly when {@code expiryHeader} is not null; the x-idempotency extension.
     */
    public static void assertGuarded(OpenAPI api, Operation op, boolean required, int maxLength, String kept, String expiryHeader) {
        Parameter key = keyHeader(op);
        assertThat(key.getRequired()).as("the key header is required").isEqualTo(required);
        assertThat(key.getSchema().getMaxLength()).as("the key's maximum length").isEqualTo(maxLength);
        assertThat(key.getSchema().getMinLength()).isEqualTo(1);
        assertThat(op.getResponses()).containsKeys(kept, "400", "409", "413", "422", "503");
        for (String code : List.of("400", "409", "413", "422", "503")) {
            ApiResponse problem = op.getResponses().get(code);
            assertThat(problem.getContent()).as(code).containsOnlyKeys(PROBLEM);
            assertThat(problem.getContent().get(PROBLEM).getSchema().get$ref()).as(code).isEqualTo(PROBLEM_REF);
        }
        assertThat(op.getResponses().get("409").getHeaders()).containsOnlyKeys("Retry-After");
        assertThat(op.getResponses().get("503").getHeaders()).containsOnlyKeys("Retry-After");
        if (expiryHeader == null) {
            assertThat(op.getResponses().get(kept).getHeaders()).containsOnlyKeys("Idempotent-Replayed");
        } else {
            assertThat(op.getResponses().get(kept).getHeaders()).containsOnlyKeys("Idempotent-Replayed", expiryHeader);
        }
        assertThat(api.getComponents().getSchemas().get("IdempotencyProblem").getProperties())
                .containsKeys("type", "title", "status", "detail");
        assertThat(op.getExtensions()).containsKey("x-idempotency");
        @SuppressWarnings("unchecked")
        Map<String, Object> x = (Map<String, Object>) op.getExtensions().get("x-idempotency");
        assertThat(x).containsEntry("key-header", "Idempotency-Key").containsEntry("key-required", required)
                .containsEntry("key-max-length", maxLength).containsKey("key-lifetime");
        if (expiryHeader == null) {
            assertThat(x).doesNotContainKey("expiry-header");
        } else {
            assertThat(x).containsEntry("expiry-header", expiryHeader);
        }
    }

    /**
     * The Quarkus and Helidon test applications' {@code /documented} resource: a required key of at most 100 characters
     * with the expiry header configured for it alone, an optional key, an unguarded read.
     */
    public static void assertDocumentedResource(OpenAPI api) {
        assertGuarded(api, operation(api, "/documented/required", PathItem.HttpMethod.POST), true, 100, "201", "Idempotency-Expires");
        assertGuarded(api, operation(api, "/documented/optional", PathItem.HttpMethod.POST), false, 100, "201", null);
        assertUnguarded(operation(api, "/documented", PathItem.HttpMethod.GET));
    }

    /** An operation the library does not guard: nothing of it. */
    public static void assertUnguarded(Operation op) {
        assertThat(op.getParameters() == null ? List.<Parameter>of() : op.getParameters())
                .noneMatch(p -> "Idempotency-Key".equalsIgnoreCase(p.getName()));
        assertThat(op.getResponses()).doesNotContainKeys("409", "422", "503");
        op.getResponses().values().forEach(r -> assertThat(r.getHeaders() == null ? Map.of() : r.getHeaders())
                .doesNotContainKey("Idempotent-Replayed"));
        assertThat(op.getExtensions() == null ? Map.of() : op.getExtensions()).doesNotContainKey("x-idempotency");
    }

    public static Parameter keyHeader(Operation op) {
        assertThat(op.getParameters()).as("parameters").isNotNull();
        return op.getParameters().stream().filter(p -> "header".equals(p.getIn()) && "Idempotency-Key".equals(p.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("no Idempotency-Key header parameter in " + op.getParameters()));
    }
}
