package dev.idempotency.jaxrs;

import jakarta.ws.rs.core.Response;

/**
 * RFC 9457 problem details for the answers the filter gives itself. The {@code type} URIs are stable and
 * listed in the README; {@code detail} never carries stored data or the request. Public for the OpenAPI filter,
 * which describes them; not API.
 */
public final class Problems {

    public static final String MEDIA_TYPE = "application/problem+json";
    public static final String BASE = "https://idempotency.dev/problems/";

    public static final String KEY_MISSING = BASE + "key-missing";
    public static final String KEY_INVALID = BASE + "key-invalid";
    public static final String KEY_REUSED = BASE + "key-reused";
    public static final String IN_PROGRESS = BASE + "request-in-progress";
    public static final String STORE_UNAVAILABLE = BASE + "store-unavailable";
    public static final String ROLLED_BACK = BASE + "rolled-back";
    public static final String UNAUTHENTICATED = BASE + "unauthenticated";
    public static final String CLIENT_ID_INVALID = BASE + "client-id-invalid";
    public static final String BODY_INVALID = BASE + "body-invalid";
    public static final String BODY_FIELD_MISSING = BASE + "body-field-missing";
    public static final String REQUEST_TOO_LARGE = BASE + "request-too-large";

    /** Every type URI, for the OpenAPI document's description of the body. */
    public static final java.util.List<String> TYPES = java.util.List.of(KEY_MISSING, KEY_INVALID, KEY_REUSED, IN_PROGRESS,
            STORE_UNAVAILABLE, ROLLED_BACK, UNAUTHENTICATED, CLIENT_ID_INVALID, BODY_INVALID, BODY_FIELD_MISSING,
            REQUEST_TOO_LARGE);

    /** Retry-After of a 503: the store is checked again on the next request. */
    static final long STORE_RETRY_AFTER_SECONDS = 5;

    private Problems() {
    }

    static Response keyMissing(String header) {
        return problem(400, KEY_MISSING, "Idempotency key missing",
                "This operation requires an " + header + " request header: a unique key per operation, reused on every retry.", null);
    }

    /** A key that may come from the body: no header, and no key in the body's field either. */
    static Response keyMissing(String header, String field) {
        return problem(400, KEY_MISSING, "Idempotency key missing",
                "This operation requires an idempotency key" + (header == null ? "" : ": an " + header + " request header or")
                        + " in the body's field " + field + ": a unique key per operation, reused on every retry.", null);
    }

    static Response keyFieldInvalid(String field, String problem, int maxLength) {
        return problem(400, KEY_INVALID, "Idempotency key invalid",
                "The body's field " + field + " " + problem + ". Send a string of 1 to " + maxLength + " printable ASCII characters.", null);
    }

    /** The body is read as JSON (its key or its fingerprint fields) and is not JSON. */
    static Response bodyInvalid() {
        return problem(400, BODY_INVALID, "Request body invalid",
                "This operation reads its idempotency key or fingerprint from a JSON body, and the body is not JSON. "
                        + "Send a JSON body.", null);
    }

    static Response bodyFieldMissing(String field) {
        return problem(400, BODY_FIELD_MISSING, "Request body field missing",
                "This operation fingerprints the body's field " + field + ", which the body does not have. Send it.", null);
    }

    /** A body over the method's {@code maxRequestSize}: answered before it is read whole. */
    static Response requestTooLarge(long maxBytes) {
        return problem(413, REQUEST_TOO_LARGE, "Request body too large",
                "This operation accepts a request body of at most " + maxBytes + " bytes. Send a smaller body.", null);
    }

    static Response keyInvalid(String header, String problem, int maxLength) {
        return problem(400, KEY_INVALID, "Idempotency key invalid",
                "The " + header + " header " + problem + ". Send one value of 1 to " + maxLength + " printable ASCII characters.", null);
    }

    /** A keyed request without a principal where anonymous keys are rejected or need a client header. */
    static Response unauthenticated(String clientHeader, String challenge) {
        return challenged(problem(401, UNAUTHENTICATED, "Authentication required for idempotency keys",
                clientHeader == null
                        ? "This operation accepts an idempotency key only from an authenticated caller. Authenticate and retry."
                        : "This operation accepts an idempotency key only from an authenticated caller or a client that names "
                        + "itself in the " + clientHeader + " request header. Send either and retry.", null), challenge);
    }

    /** A keyed request whose credentials the server did not accept: it is not run as an anonymous caller. */
    static Response credentialsRefused(String challenge) {
        return challenged(problem(401, UNAUTHENTICATED, "Authentication required for idempotency keys",
                "The request's credentials were not accepted; an idempotency key is not taken from a caller that could not be"
                        + " authenticated. Send valid credentials, or none, and retry.", null), challenge);
    }

    private static Response challenged(Response problem, String challenge) {
        return Response.fromResponse(problem).header(jakarta.ws.rs.core.HttpHeaders.WWW_AUTHENTICATE, challenge).build();
    }

    static Response clientIdInvalid(String clientHeader, String problem) {
        return problem(400, CLIENT_ID_INVALID, "Client id invalid",
                "The " + clientHeader + " header " + problem + ". Send one value of 1 to "
                        + dev.idempotency.config.AnonymousPolicy.MAX_CLIENT_ID + " printable ASCII characters.", null);
    }

    static Response keyReused(String header) {
        return problem(422, KEY_REUSED, "Idempotency key reused",
                "This " + header + " was already used for a different request (another method, path, query or body). "
                        + "Use a new key for a new request.", null);
    }

    static Response inProgress(long retryAfterSeconds) {
        return problem(409, IN_PROGRESS, "Request in progress",
                "A request with this idempotency key is still being processed. Retry after " + retryAfterSeconds + " s.",
                retryAfterSeconds);
    }

    static Response storeUnavailable() {
        return problem(503, STORE_UNAVAILABLE, "Idempotency store unavailable",
                "The request was not processed because its idempotency could not be checked. Retry later.",
                STORE_RETRY_AFTER_SECONDS);
    }

    /** A success whose transaction was marked for rollback: nothing of it was done or kept, so it is not sent. */
    static Response rolledBack() {
        return problem(500, ROLLED_BACK, "Request rolled back",
                "The request's transaction was marked for rollback: nothing of it was done or remembered. A retry with the"
                        + " same key runs it again.", null);
    }

    private static Response problem(int status, String type, String title, String detail, Long retryAfter) {
        String json = "{\"type\":\"" + escape(type) + "\",\"title\":\"" + escape(title) + "\",\"status\":" + status
                + ",\"detail\":\"" + escape(detail) + "\"}";
        Response.ResponseBuilder b = Response.status(status).type(MEDIA_TYPE).entity(json);
        if (retryAfter != null) {
            b.header("Retry-After", retryAfter);
        }
        return b.build();
    }

    private static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
