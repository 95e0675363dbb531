package dev.idempotency.openapi;

import dev.idempotency.config.AnonymousPolicy;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.HttpOptions;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.jaxrs.Problems;

import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.Components;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Adds to an OpenAPI document what a client of each guarded operation needs: the key header, the answers the library
 * gives itself (400, 401, 409, 413, 422, 500, 503 as problem+json), the replay marker and expiry header on the statuses
 * that are kept, and the key's lifetime and scope ({@value #EXTENSION}). What the document already says wins: a
 * parameter, a response or a schema of the same name is left as the application wrote it.
 */
final class OpenApiDecoration {

    static final String PROBLEM_SCHEMA = "IdempotencyProblem";
    static final String EXTENSION = "x-idempotency";
    static final String REPLAYED = "Idempotent-Replayed";

    private static final Logger LOG = Logger.getLogger(OpenApiDecoration.class.getName());

    private final GlobalSettings global;

    OpenApiDecoration(GlobalSettings global) {
        this.global = global;
    }

    /** Decorates every guarded operation found in the document; returns how many it found. */
    int decorate(OpenAPI api, GuardedResources.Found found) {
        if (api.getPaths() == null || api.getPaths().getPathItems() == null) {
            return 0;
        }
        Map<String, PathItem> items = api.getPaths().getPathItems();
        int decorated = 0;
        for (GuardedResources.Operation guarded : found.operations()) {
            PathItem item = match(items, guarded.path(), found.applicationPaths());
            Operation operation = item == null ? null : operation(item, guarded.verb());
            if (operation == null) {
                LOG.log(Level.FINE, "idempotency-jakarta: no {0} {1} in the OpenAPI document", new Object[] {guarded.verb(), guarded.path()});
                continue;
            }
            decorate(api, item, operation, guarded);
            decorated++;
        }
        if (decorated > 0) {
            problemSchema(api);
        }
        return decorated;
    }

    /**
     * The document's path item of an operation's path: the application's path and the operation's, or else the one
     * path that ends with the operation's (a runtime that mounts the application elsewhere); none when several do.
     */
    static PathItem match(Map<String, PathItem> items, String path, Set<String> applicationPaths) {
        List<String> exact = new ArrayList<>();
        List<String> suffix = new ArrayList<>();
        for (String key : items.keySet()) {
            String normalized = GuardedResources.normalize(key);
            if (normalized.equals(path) || applicationPaths.stream().anyMatch(a -> normalized.equals(GuardedResources.normalize(a + path)))) {
                exact.add(key);
            } else if (normalized.endsWith(path) && !path.equals("/")) {
                suffix.add(key);
            }
        }
        List<String> chosen = exact.isEmpty() ? suffix : exact;
        return chosen.size() == 1 ? items.get(chosen.get(0)) : null;
    }

    private static Operation operation(PathItem item, String verb) {
        Map<PathItem.HttpMethod, Operation> operations = item.getOperations();
        if (operations == null) {
            return null;
        }
        for (Map.Entry<PathItem.HttpMethod, Operation> e : operations.entrySet()) {
            if (e.getKey().name().equals(verb)) {
                return e.getValue();
            }
        }
        return null;
    }

    private void decorate(OpenAPI api, PathItem item, Operation operation, GuardedResources.Operation guarded) {
        MethodSettings settings = guarded.settings();
        HttpOptions http = settings.http();
        if (http.keyFromHeader() && !hasHeaderParameter(api, item, operation, http.header())) {
            operation.addParameter(keyParameter(settings));
        }
        APIResponses responses = operation.getResponses();
        if (responses == null) {
            responses = OASFactory.createAPIResponses();
            operation.setResponses(responses);
        }
        for (Map.Entry<String, APIResponse> e : responses.getAPIResponses() == null ? Map.<String, APIResponse>of().entrySet()
                : responses.getAPIResponses().entrySet()) {
            if (kept(http, e.getKey()) && e.getValue() != null && e.getValue().getRef() == null) {
                replayHeaders(e.getValue(), http);
            }
        }
        AnonymousPolicy.Mode anonymous = http.anonymous().mode();
        problem(responses, "400", "The idempotency key is missing or malformed" + (http.jsonBody() ? ", or the body is not JSON or lacks a field the key or fingerprint is read from" : "")
                + "; nothing ran. Send a key of 1 to " + global.maxKeyLength() + " printable ASCII characters.",
                types(Problems.KEY_MISSING, Problems.KEY_INVALID, http.jsonBody() ? Problems.BODY_INVALID : null,
                        http.jsonBody() ? Problems.BODY_FIELD_MISSING : null,
                        anonymous == AnonymousPolicy.Mode.HEADER ? Problems.CLIENT_ID_INVALID : null), null);
        if (anonymous != AnonymousPolicy.Mode.ALLOW || global.scopeByPrincipal()) {
            problem(responses, "401", (anonymous == AnonymousPolicy.Mode.ALLOW
                            ? "A keyed request with credentials the server did not accept"
                            : "A keyed request from a caller that is not authenticated"
                            + (anonymous == AnonymousPolicy.Mode.HEADER ? " and names no client in the " + http.anonymous().header()
                            + " header" : "") + ", or with credentials the server did not accept")
                            + "; nothing ran. Authenticate and retry with the same key.",
                    types(Problems.UNAUTHENTICATED), "WWW-Authenticate");
        }
        problem(responses, "409", "A request with this key is still being processed; nothing ran. Retry after the "
                + "Retry-After seconds: the retry gets the first request's answer.", types(Problems.IN_PROGRESS), "Retry-After");
        if (!Set.of("GET", "HEAD", "OPTIONS").contains(guarded.verb())) {
            problem(responses, "413", "The request body is larger than " + http.maxRequestSize()
                    + " bytes, the most this operation reads; nothing ran.", types(Problems.REQUEST_TOO_LARGE), null);
        }
        problem(responses, "422", "This key was already used for a different request (another method, path, query or "
                + "body); nothing ran. Use a new key for a new request.", types(Problems.KEY_REUSED), null);
        problem(responses, "500", "The request's transaction was marked for rollback: nothing of it was done or kept. A retry"
                + " with the same key runs it again.", types(Problems.ROLLED_BACK), null);
        problem(responses, "503", (http.failOpen()
                ? "The answer could not be kept (the idempotency store is unavailable); nothing of it was kept."
                : "The key could not be checked, or the answer kept (the idempotency store is unavailable); nothing of it"
                + " was kept.") + " Retry after the Retry-After seconds with the same key.", types(Problems.STORE_UNAVAILABLE), "Retry-After");
        if (operation.getExtensions() == null || !operation.getExtensions().containsKey(EXTENSION)) {
            operation.addExtension(EXTENSION, extension(settings));
        }
    }

    /** Whether the operation, or its path, already has the key's header parameter: written inline or referenced. */
    private static boolean hasHeaderParameter(OpenAPI api, PathItem item, Operation operation, String header) {
        List<Parameter> all = new ArrayList<>();
        if (operation.getParameters() != null) {
            all.addAll(operation.getParameters());
        }
        if (item.getParameters() != null) {
            all.addAll(item.getParameters());
        }
        for (Parameter p : all) {
            Parameter resolved = p;
            if (p.getRef() != null) {
                String name = p.getRef().substring(p.getRef().lastIndexOf('/') + 1);
                resolved = api.getComponents() == null || api.getComponents().getParameters() == null ? null
                        : api.getComponents().getParameters().get(name);
                if (resolved == null) {
                    // a reference the filter cannot read: it may be the key's header, and a second one is invalid
                    return true;
                }
            }
            if (resolved.getIn() == Parameter.In.HEADER && resolved.getName() != null && resolved.getName().equalsIgnoreCase(header)) {
                return true;
            }
        }
        return false;
    }

    private Parameter keyParameter(MethodSettings settings) {
        HttpOptions http = settings.http();
        boolean required = settings.required() && http.keyFrom().isEmpty();
        StringBuilder d = new StringBuilder("A key the client makes unique for this request (a UUID, say) and sends again, "
                + "unchanged, on each retry of it. The first request with the key runs; a retry within "
                + lifetime(settings) + " gets the first request's answer back, marked " + REPLAYED + ": true, and does not run again.");
        if (!http.keyFrom().isEmpty()) {
            d.append(" Or the key in the body's field ").append(http.keyFrom()).append(http.keyFromHeader() ? " (this header wins)." : ".");
        } else if (!required) {
            d.append(" Optional: a request without a key runs unprotected.");
        }
        return OASFactory.createParameter()
                .name(http.header())
                .in(Parameter.In.HEADER)
                .required(required)
                .description(d.toString())
                .schema(typed(OASFactory.createSchema(), Schema.SchemaType.STRING)
                        .minLength(1).maxLength(global.maxKeyLength()).pattern("^[\\x20-\\x7E]+$"));
    }

    private void replayHeaders(APIResponse response, HttpOptions http) {
        if (!hasHeader(response, REPLAYED)) {
            response.addHeader(REPLAYED, OASFactory.createHeader()
                    .description("true on the first answer replayed to a retry with the same key; absent on the first answer itself.")
                    .schema(typed(OASFactory.createSchema(), Schema.SchemaType.BOOLEAN)));
        }
        if (!http.expiryHeader().isEmpty() && !hasHeader(response, http.expiryHeader())) {
            response.addHeader(http.expiryHeader(), OASFactory.createHeader()
                    .description("Until when the key is remembered (an HTTP date): a retry sent before then gets this answer.")
                    .schema(typed(OASFactory.createSchema(), Schema.SchemaType.STRING)));
        }
    }

    private static boolean hasHeader(APIResponse response, String name) {
        return response.getHeaders() != null && response.getHeaders().keySet().stream().anyMatch(h -> h.equalsIgnoreCase(name));
    }

    /** Whether a response code of the document ({@code 201}, {@code 2XX}) is one the method keeps and replays. */
    static boolean kept(HttpOptions http, String code) {
        String c = code.strip().toUpperCase(Locale.ROOT);
        if (c.length() == 3 && c.endsWith("XX") && Character.isDigit(c.charAt(0))) {
            c = c.charAt(0) + "00";
        }
        try {
            return http.keepStatus().contains(Integer.parseInt(c));
        } catch (NumberFormatException e) {
            return false; // "default"
        }
    }

    private static void problem(APIResponses responses, String code, String description, String types, String header) {
        if (responses.hasAPIResponse(code)) {
            return;
        }
        APIResponse response = OASFactory.createAPIResponse()
                .description(description + " Problem types: " + types + ".")
                .content(OASFactory.createContent().addMediaType(Problems.MEDIA_TYPE,
                        OASFactory.createMediaType().schema(OASFactory.createSchema().ref(PROBLEM_SCHEMA))));
        if ("Retry-After".equals(header)) {
            response.addHeader(header, OASFactory.createHeader()
                    .description("Seconds to wait before retrying with the same key.")
                    .schema(typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER)));
        } else if (header != null) {
            response.addHeader(header, OASFactory.createHeader()
                    .description("The authentication scheme to use (idempotency.www-authenticate), or the one the request sent.")
                    .schema(typed(OASFactory.createSchema(), Schema.SchemaType.STRING)));
        }
        responses.addAPIResponse(code, response);
    }

    private static String types(String... types) {
        return String.join(", ", java.util.Arrays.stream(types).filter(java.util.Objects::nonNull).toList());
    }

    private Map<String, Object> extension(MethodSettings settings) {
        HttpOptions http = settings.http();
        Map<String, Object> x = new LinkedHashMap<>();
        if (http.keyFromHeader()) {
            x.put("key-header", http.header());
        }
        if (!http.keyFrom().isEmpty()) {
            x.put("key-field", http.keyFrom());
        }
        x.put("key-required", settings.required());
        x.put("key-max-length", global.maxKeyLength());
        x.put("key-lifetime", settings.policy().ttl().toString());
        x.put("key-lifetime-seconds", settings.policy().ttl().toSeconds());
        x.put("key-scope", !global.scopeByPrincipal() ? "application"
                : http.anonymous().mode() == AnonymousPolicy.Mode.HEADER ? "caller-or-client" : "caller");
        x.put("kept-statuses", http.keepStatus().toString());
        x.put("replayed-header", REPLAYED);
        if (!http.expiryHeader().isEmpty()) {
            x.put("expiry-header", http.expiryHeader());
        }
        return x;
    }

    private static String lifetime(MethodSettings settings) {
        return settings.policy().ttl().toString().substring(2).toLowerCase(Locale.ROOT);
    }

    /** The problem+json body (RFC 9457), once in the document's components, unless it already has one of that name. */
    private static void problemSchema(OpenAPI api) {
        Components components = api.getComponents();
        if (components == null) {
            components = OASFactory.createComponents();
            api.setComponents(components);
        }
        if (components.getSchemas() != null && components.getSchemas().containsKey(PROBLEM_SCHEMA)) {
            return;
        }
        Schema problem = typed(OASFactory.createSchema(), Schema.SchemaType.OBJECT)
                .description("An answer the idempotency library gives itself (RFC 9457 problem details); nothing of the "
                        + "request ran. Its type names the problem: " + String.join(", ", Problems.TYPES) + ".")
                .addProperty("type", typed(OASFactory.createSchema(), Schema.SchemaType.STRING).format("uri")
                        .description("The problem's type: one of the library's, listed above."))
                .addProperty("title", typed(OASFactory.createSchema(), Schema.SchemaType.STRING)
                        .description("A short summary of the type."))
                .addProperty("status", typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER)
                        .description("The HTTP status code."))
                .addProperty("detail", typed(OASFactory.createSchema(), Schema.SchemaType.STRING)
                        .description("What to do about it; never the request's data."))
                .addProperty("instance", typed(OASFactory.createSchema(), Schema.SchemaType.STRING).format("uri-reference")
                        .description("The occurrence, when there is one."));
        components.addSchema(PROBLEM_SCHEMA, problem);
    }

    /**
     * Sets a schema's type on either model: MicroProfile OpenAPI 3 ({@code type(SchemaType)}) or 4 (a list of types,
     * OpenAPI 3.1): the runtimes this library supports ship both, and the library compiles against the older one.
     */
    static Schema typed(Schema schema, Schema.SchemaType type) {
        try {
            Method single = SET_TYPE_SINGLE;
            if (single != null) {
                single.invoke(schema, type);
            } else {
                SET_TYPE_LIST.invoke(schema, List.of(type));
            }
            return schema;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot set an OpenAPI schema's type", e);
        }
    }

    private static final Method SET_TYPE_SINGLE = setter(Schema.SchemaType.class);
    private static final Method SET_TYPE_LIST = SET_TYPE_SINGLE != null ? null : setter(List.class);

    private static Method setter(Class<?> parameter) {
        try {
            return Schema.class.getMethod("setType", parameter);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
