package dev.idempotency.openapi;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.Idempotent;
import dev.idempotency.testing.IdempotencyWeld;

import io.smallrye.openapi.runtime.io.Format;
import io.smallrye.openapi.runtime.io.OpenApiSerializer;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLConnection;
import java.net.URLStreamHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The OpenAPI filter on SmallRye OpenAPI's model (what WildFly, Open Liberty, Quarkus and Helidon build): each guarded
 * operation gets its key header, the library's own answers and the replay markers exactly as the method's settings say;
 * anything else in the document stays as it was. The in-server tests check the same on each runtime's served document.
 */
class IdempotencyOASFilterTest {

    @ApplicationPath("/api")
    public static class Api extends Application {
    }

    @jakarta.ws.rs.Path("/payments")
    public static class Payments {

        @POST
        @Idempotent
        public Response create(String body) {
            return Response.status(201).build();
        }

        @POST
        @jakarta.ws.rs.Path("optional")
        @Idempotent(required = false)
        public Response optional(String body) {
            return Response.ok().build();
        }

        @PUT
        @jakarta.ws.rs.Path("{id: [0-9]{3}}")
        @Idempotent(keyFrom = "/orderId", ttl = "PT2H")
        public Response replace(@PathParam("id") String id, String body) {
            return Response.ok().build();
        }

        @GET
        @jakarta.ws.rs.Path("{id}")
        public Response get(@PathParam("id") String id) {
            return Response.ok().build();
        }
    }

    static final String INDEX = "# written by the compiler\nresource " + Payments.class.getName() + "\napplication "
            + Api.class.getName() + "\n";

    /** The document a runtime builds for those resources (and one more path), before any filter. */
    static OpenAPI document() {
        OpenAPI api = OASFactory.createOpenAPI().openapi("3.0.3")
                .info(OASFactory.createInfo().title("payments").version("1"))
                .paths(OASFactory.createPaths()
                        .addPathItem("/api/payments", OASFactory.createPathItem().POST(operation("create", "201")))
                        .addPathItem("/api/payments/optional", OASFactory.createPathItem().POST(operation("optional", "200")))
                        .addPathItem("/api/payments/{id}", OASFactory.createPathItem()
                                .PUT(operation("replace", "200"))
                                .GET(operation("get", "200")))
                        .addPathItem("/api/health", OASFactory.createPathItem().POST(operation("health", "200"))));
        return api;
    }

    static Operation operation(String id, String status) {
        return OASFactory.createOperation().operationId(id).responses(OASFactory.createAPIResponses()
                .addAPIResponse(status, OASFactory.createAPIResponse().description("the answer"))
                .addAPIResponse("404", OASFactory.createAPIResponse().description("no such payment")));
    }

    static OpenAPI filtered(OpenAPI api, Map<String, String> config, String index) {
        new IdempotencyOASFilter(new IndexLoader(index), IdempotencyWeld.config(config)).filterOpenAPI(api);
        return api;
    }

    static OpenAPI filtered(Map<String, String> config) {
        return filtered(document(), config, INDEX);
    }

    static Operation op(OpenAPI api, String path, PathItem.HttpMethod verb) {
        return api.getPaths().getPathItem(path).getOperations().get(verb);
    }

    static Parameter keyParameter(Operation op) {
        return op.getParameters().stream().filter(p -> p.getName().equals("Idempotency-Key")).findFirst().orElseThrow();
    }

    @Test
    @DisplayName("a required key: the header parameter, its length as configured, the library's answers, the replay marker")
    void aRequiredKey() {
        OpenAPI api = filtered(Map.of("idempotency.max-key-length", "64"));
        Operation create = op(api, "/api/payments", PathItem.HttpMethod.POST);

        Parameter key = keyParameter(create);
        assertThat(key.getIn()).isEqualTo(Parameter.In.HEADER);
        assertThat(key.getRequired()).isTrue();
        assertThat(key.getSchema().getMaxLength()).isEqualTo(64);
        assertThat(key.getSchema().getMinLength()).isEqualTo(1);
        assertThat(key.getDescription()).contains("24h").contains("Idempotent-Replayed");

        assertThat(create.getResponses().getAPIResponses()).containsKeys("201", "404", "400", "401", "409", "413", "422", "500", "503");
        assertThat(create.getResponses().getAPIResponse("401").getHeaders()).as("credentials the server refused")
                .containsOnlyKeys("WWW-Authenticate");
        for (String code : List.of("400", "401", "409", "413", "422", "500", "503")) {
            APIResponse problem = create.getResponses().getAPIResponse(code);
            assertThat(problem.getContent().getMediaType("application/problem+json").getSchema().getRef())
                    .isEqualTo("#/components/schemas/IdempotencyProblem");
        }
        assertThat(create.getResponses().getAPIResponse("409").getHeaders()).containsKey("Retry-After");
        assertThat(create.getResponses().getAPIResponse("503").getHeaders()).containsKey("Retry-After");
        assertThat(create.getResponses().getAPIResponse("422").getDescription()).contains("key-reused");
        assertThat(create.getResponses().getAPIResponse("201").getHeaders()).containsOnlyKeys("Idempotent-Replayed");
        assertThat(create.getResponses().getAPIResponse("404").getHeaders())
                .as("a 404 is kept and replayed by default").containsOnlyKeys("Idempotent-Replayed");
        assertThat(api.getComponents().getSchemas().get("IdempotencyProblem").getProperties())
                .containsOnlyKeys("type", "title", "status", "detail", "instance");

        @SuppressWarnings("unchecked")
        Map<String, Object> x = (Map<String, Object>) create.getExtensions().get("x-idempotency");
        assertThat(x).containsEntry("key-header", "Idempotency-Key").containsEntry("key-required", true)
                .containsEntry("key-max-length", 64).containsEntry("key-lifetime", "PT24H")
                .containsEntry("key-lifetime-seconds", 86_400L).containsEntry("key-scope", "caller")
                .doesNotContainKey("expiry-header");
    }

    @Test
    @DisplayName("as a runtime makes it: registered by the library's configuration source, created with no argument, it decorates")
    void asARuntimeMakesIt() {
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        IndexLoader application = new IndexLoader(INDEX);
        // the application's configuration: the sources its class loader brings (the library's among them), not this
        // machine's environment
        ConfigProviderResolver resolver = ConfigProviderResolver.instance();
        resolver.registerConfig(new io.smallrye.config.SmallRyeConfigBuilder().forClassLoader(application)
                .addDiscoveredSources().build(), application);
        Thread.currentThread().setContextClassLoader(application);
        try {
            String named = org.eclipse.microprofile.config.ConfigProvider.getConfig(application).getValue("mp.openapi.filter", String.class);
            assertThat(named).isEqualTo(IdempotencyOASFilter.class.getName());
            OpenAPI api = document();
            new IdempotencyOASFilter().filterOpenAPI(api);
            assertThat(keyParameter(op(api, "/api/payments", PathItem.HttpMethod.POST)).getRequired()).isTrue();
        } finally {
            Thread.currentThread().setContextClassLoader(before);
            resolver.releaseConfig(resolver.getConfig(application));
        }
    }

    /** Whether this class registered the configuration SmallRye OpenAPI's writer asks for, and must release it. */
    static boolean ownConfig;

    /**
     * SmallRye OpenAPI's writer reads MicroProfile Config for the test's class loader, and the first read registers one
     * that outlives this class (a later test's server then cannot register its own): an empty one of this class's,
     * released after it.
     */
    @BeforeAll
    static void giveTheWriterAConfiguration() {
        try {
            ConfigProviderResolver.instance().registerConfig(IdempotencyWeld.config(Map.of()), IdempotencyOASFilterTest.class.getClassLoader());
            ownConfig = true;
        } catch (IllegalStateException alreadyOne) {
            ownConfig = false;
        }
    }

    @AfterAll
    static void releaseIt() {
        if (ownConfig) {
            ConfigProviderResolver resolver = ConfigProviderResolver.instance();
            resolver.releaseConfig(resolver.getConfig(IdempotencyOASFilterTest.class.getClassLoader()));
        }
    }

    @Test
    @DisplayName("an optional key, a key in the body with its own lifetime, kept statuses as configured")
    void anOptionalKeyAndAKeyInTheBody() {
        OpenAPI api = filtered(Map.of(Payments.class.getName() + "/optional/Idempotent/keepStatus", "2xx"));
        Operation optional = op(api, "/api/payments/optional", PathItem.HttpMethod.POST);
        assertThat(keyParameter(optional).getRequired()).isFalse();
        assertThat(keyParameter(optional).getDescription()).contains("Optional");
        assertThat(optional.getResponses().getAPIResponse("404").getHeaders())
                .as("404 is not among this method's kept statuses").isNull();
        assertThat(optional.getResponses().getAPIResponse("200").getHeaders()).containsKey("Idempotent-Replayed");

        Operation replace = op(api, "/api/payments/{id}", PathItem.HttpMethod.PUT);
        assertThat(keyParameter(replace).getRequired()).as("the key may come from the body instead").isFalse();
        assertThat(keyParameter(replace).getDescription()).contains("/orderId");
        @SuppressWarnings("unchecked")
        Map<String, Object> x = (Map<String, Object>) replace.getExtensions().get("x-idempotency");
        assertThat(x).containsEntry("key-field", "/orderId").containsEntry("key-lifetime", "PT2H");
        assertThat(replace.getResponses().getAPIResponse("400").getDescription()).contains("body-field-missing");
    }

    @Test
    @DisplayName("an expiry header set on one method only appears on that method's kept responses")
    void anExpiryHeaderOnOneMethod() {
        OpenAPI api = filtered(Map.of(Payments.class.getName() + "/create/Idempotent/expiryHeader", "Idempotency-Expires"));
        assertThat(op(api, "/api/payments", PathItem.HttpMethod.POST).getResponses().getAPIResponse("201").getHeaders())
                .containsOnlyKeys("Idempotent-Replayed", "Idempotency-Expires");
        assertThat(op(api, "/api/payments/optional", PathItem.HttpMethod.POST).getResponses().getAPIResponse("200").getHeaders())
                .containsOnlyKeys("Idempotent-Replayed");
    }

    @Test
    @DisplayName("unguarded operations and paths are left exactly as they were")
    void unguardedOperationsAreUnchanged() throws IOException {
        OpenAPI before = document();
        OpenAPI after = filtered(Map.of());
        for (String path : List.of("/api/health")) {
            assertThat(json(after.getPaths().getPathItem(path))).isEqualTo(json(before.getPaths().getPathItem(path)));
        }
        assertThat(op(after, "/api/payments/{id}", PathItem.HttpMethod.GET).getParameters()).isNull();
        assertThat(op(after, "/api/payments/{id}", PathItem.HttpMethod.GET).getResponses().getAPIResponses())
                .containsOnlyKeys("200", "404");
        assertThat(op(after, "/api/payments/{id}", PathItem.HttpMethod.GET).getResponses().getAPIResponse("200").getHeaders()).isNull();
    }

    @Test
    @DisplayName("what the application wrote wins: its own key parameter, its own 409, its own problem schema")
    void theApplicationsOwnDescriptionsWin() {
        OpenAPI api = document();
        Operation create = op(api, "/api/payments", PathItem.HttpMethod.POST);
        create.addParameter(OASFactory.createParameter().name("idempotency-key").in(Parameter.In.HEADER).description("ours"));
        create.getResponses().addAPIResponse("409", OASFactory.createAPIResponse().description("our conflict"));
        api.components(OASFactory.createComponents().addSchema("IdempotencyProblem", OASFactory.createSchema().description("ours")));

        filtered(api, Map.of(), INDEX);

        assertThat(create.getParameters()).singleElement().satisfies(p -> assertThat(p.getDescription()).isEqualTo("ours"));
        assertThat(create.getResponses().getAPIResponse("409").getDescription()).isEqualTo("our conflict");
        assertThat(create.getResponses().getAPIResponse("409").getHeaders()).isNull();
        assertThat(api.getComponents().getSchemas().get("IdempotencyProblem").getDescription()).isEqualTo("ours");
        assertThat(create.getResponses().getAPIResponses()).containsKeys("400", "422");
    }

    @Test
    @DisplayName("a key header the application declared by reference, or on the path, is not added twice")
    void aReferencedOrPathLevelKeyHeader() {
        OpenAPI api = document();
        api.components(OASFactory.createComponents().addParameter("IdemKey",
                OASFactory.createParameter().name("Idempotency-Key").in(Parameter.In.HEADER).description("ours")));
        Operation create = op(api, "/api/payments", PathItem.HttpMethod.POST);
        create.addParameter(OASFactory.createParameter().ref("IdemKey"));
        api.getPaths().getPathItem("/api/payments/optional").addParameter(
                OASFactory.createParameter().name("Idempotency-Key").in(Parameter.In.HEADER).description("on the path"));

        filtered(api, Map.of(), INDEX);

        assertThat(create.getParameters()).singleElement().satisfies(p -> assertThat(p.getRef()).isNotNull());
        assertThat(op(api, "/api/payments/optional", PathItem.HttpMethod.POST).getParameters()).isNull();
        assertThat(create.getExtensions()).containsKey("x-idempotency");
    }

    @Test
    @DisplayName("keys shared by all callers, anonymous allowed: no 401; refused: 401; fail-open still answers 503 when the answer cannot be kept")
    void anonymousFailOpenAndScope() {
        assertThat(op(filtered(Map.of("idempotency.scope-by-principal", "false")), "/api/payments", PathItem.HttpMethod.POST)
                .getResponses().getAPIResponses()).doesNotContainKey("401");
        OpenAPI api = filtered(Map.of("idempotency.anonymous", "reject", "idempotency.fail-open", "true",
                "idempotency.scope-by-principal", "false"));
        Operation create = op(api, "/api/payments", PathItem.HttpMethod.POST);
        assertThat(create.getResponses().getAPIResponses()).containsKeys("401", "503");
        assertThat(create.getResponses().getAPIResponse("503").getDescription()).contains("could not be kept");
        @SuppressWarnings("unchecked")
        Map<String, Object> x = (Map<String, Object>) create.getExtensions().get("x-idempotency");
        assertThat(x).containsEntry("key-scope", "application");
    }

    @Test
    @DisplayName("switched off, or without the compile-time list: the document is left as it is")
    void switchedOffOrUnlisted() throws IOException {
        String untouched = json(document());
        assertThat(json(filtered(document(), Map.of("idempotency.openapi.enabled", "false"), INDEX))).isEqualTo(untouched);
        assertThat(json(filtered(document(), Map.of(), null))).isEqualTo(untouched);
        assertThat(json(filtered(document(), Map.of(Payments.class.getName() + "/Idempotent/enabled", "false"), INDEX)))
                .as("a method switched off by configuration is not guarded").isEqualTo(untouched);
    }

    /** The application's own filter, named in configuration: it sees the document first. */
    public static class ApplicationFilter implements OASFilter {
        @Override
        public void filterOpenAPI(OpenAPI openAPI) {
            openAPI.getPaths().removePathItem("/api/health");
        }

        @Override
        public Operation filterOperation(Operation operation) {
            return operation.summary("seen by the application's filter");
        }
    }

    @Test
    @DisplayName("a filter of the application's own, chained: it runs first; a wrong class name fails clearly")
    void aChainedFilter() {
        Map<String, String> config = Map.of("idempotency.openapi.filter", ApplicationFilter.class.getName());
        IdempotencyOASFilter filter = new IdempotencyOASFilter(new IndexLoader(INDEX), IdempotencyWeld.config(config));
        OpenAPI api = document();
        Operation create = op(api, "/api/payments", PathItem.HttpMethod.POST);
        assertThat(filter.filterOperation(create).getSummary()).isEqualTo("seen by the application's filter");
        filter.filterOpenAPI(api);
        assertThat(api.getPaths().getPathItems()).doesNotContainKey("/api/health");
        assertThat(keyParameter(create).getRequired()).isTrue();

        assertThatThrownBy(() -> new IdempotencyOASFilter(new IndexLoader(INDEX),
                IdempotencyWeld.config(Map.of("idempotency.openapi.filter", "com.acme.NoSuchFilter"))))
                .isInstanceOf(IdempotencyConfigurationException.class)
                .hasMessageContaining("idempotency.openapi.filter=com.acme.NoSuchFilter");
        assertThatThrownBy(() -> new IdempotencyOASFilter(new IndexLoader(INDEX),
                IdempotencyWeld.config(Map.of("idempotency.openapi.filter", Payments.class.getName()))))
                .isInstanceOf(IdempotencyConfigurationException.class).hasMessageContaining("is not an OpenAPI filter");
    }

    @Test
    @DisplayName("paths: template names and regular expressions ignored; mounted elsewhere, the one path that ends alike")
    void pathsMatch() {
        assertThat(GuardedResources.normalize("payments//{id: [0-9]{3}}/")).isEqualTo("/payments/{}");
        assertThat(GuardedResources.normalize("/")).isEqualTo("/");
        Map<String, PathItem> items = new HashMap<>();
        PathItem mounted = OASFactory.createPathItem();
        items.put("/root/api/payments/{paymentId}", mounted);
        items.put("/root/api/xpayments/{paymentId}", OASFactory.createPathItem());
        assertThat(OpenApiDecoration.match(items, "/payments/{}", java.util.Set.of("/api"))).isSameAs(mounted);
        items.put("/other/payments/{id}", OASFactory.createPathItem());
        assertThat(OpenApiDecoration.match(items, "/payments/{}", java.util.Set.of("/api")))
                .as("two candidates: neither is taken").isNull();
    }

    @Test
    @DisplayName("the annotation processor lists the classes with @Idempotent and the JAX-RS applications")
    void theProcessorListsGuardedClasses(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        java.nio.file.Path src = Files.createDirectories(dir.resolve("src/com/acme"));
        Files.writeString(src.resolve("Orders.java"), """
                package com.acme;
                @jakarta.ws.rs.Path("/orders")
                public class Orders {
                    @jakarta.ws.rs.POST @dev.idempotency.Idempotent public String create(String body) { return body; }
                    public static class Inner { @dev.idempotency.Idempotent public void run(@dev.idempotency.IdempotencyKey String k) { } }
                }
                """);
        Files.writeString(src.resolve("Shop.java"), """
                package com.acme;
                @jakarta.ws.rs.ApplicationPath("/shop") public class Shop extends jakarta.ws.rs.core.Application { }
                """);
        Files.writeString(src.resolve("Plain.java"), "package com.acme; public class Plain { }\n");
        java.nio.file.Path out = Files.createDirectories(dir.resolve("out"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int rc = javac.run(null, null, null, "-d", out.toString(), "-cp", System.getProperty("java.class.path"),
                "-processor", GuardedResourceProcessor.class.getName(),
                src.resolve("Orders.java").toString(), src.resolve("Shop.java").toString(), src.resolve("Plain.java").toString());
        assertThat(rc).isZero();
        assertThat(Files.readAllLines(out.resolve(GuardedResources.INDEX))).filteredOn(l -> !l.startsWith("#"))
                .containsExactly("application com.acme.Shop", "resource com.acme.Orders", "resource com.acme.Orders$Inner");

        // a compilation of one source (an IDE's): the classes listed before that still exist stay listed
        Files.writeString(src.resolve("Refunds.java"), """
                package com.acme;
                @jakarta.ws.rs.Path("/refunds") public class Refunds extends Base { }
                abstract class Base { @jakarta.ws.rs.POST @dev.idempotency.Idempotent public String refund(String body) { return body; } }
                """);
        rc = javac.run(null, null, null, "-d", out.toString(), "-cp", out + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                "-processor", GuardedResourceProcessor.class.getName(), src.resolve("Refunds.java").toString());
        assertThat(rc).isZero();
        assertThat(Files.readAllLines(out.resolve(GuardedResources.INDEX))).filteredOn(l -> !l.startsWith("#"))
                .containsExactly("application com.acme.Shop", "resource com.acme.Base", "resource com.acme.Orders",
                        "resource com.acme.Orders$Inner", "resource com.acme.Refunds");
    }

    @Test
    @DisplayName("the document stays serializable after the filter (SmallRye's writer)")
    void serializable() throws IOException {
        String json = json(filtered(Map.of()));
        assertThat(json).contains("\"Idempotency-Key\"").contains("\"x-idempotency\"")
                .contains("\"$ref\" : \"#/components/schemas/IdempotencyProblem\"");
    }

    static String json(Object model) throws IOException {
        if (model instanceof OpenAPI api) {
            return OpenApiSerializer.serialize(api, Format.JSON);
        }
        OpenAPI wrapper = OASFactory.createOpenAPI().paths(OASFactory.createPaths().addPathItem("/x", (PathItem) model));
        return OpenApiSerializer.serialize(wrapper, Format.JSON);
    }

    /** The test's class loader, serving a compile-time list of its own (none when {@code null}). */
    static final class IndexLoader extends ClassLoader {
        private final String index;

        IndexLoader(String index) {
            super(IdempotencyOASFilterTest.class.getClassLoader());
            this.index = index;
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            if (!name.equals(GuardedResources.INDEX)) {
                return super.getResources(name);
            }
            if (index == null) {
                return Collections.emptyEnumeration();
            }
            byte[] bytes = index.getBytes(StandardCharsets.UTF_8);
            return Collections.enumeration(List.of(new URL(null, "test:" + name, new URLStreamHandler() {
                @Override
                protected URLConnection openConnection(URL u) {
                    return new URLConnection(u) {
                        @Override
                        public void connect() {
                        }

                        @Override
                        public InputStream getInputStream() {
                            return new ByteArrayInputStream(bytes);
                        }
                    };
                }
            })));
        }
    }
}
