package dev.idempotency.example;

import jakarta.ws.rs.core.Response;

/** RFC 9457 answers: bad input, not found, the database out of reach, and every other refusal ({@link #forStatus}). */
final class Problems {

    /** The type of {@link #databaseUnavailable()}. */
    static final String DATABASE_UNAVAILABLE = "https://idempotency.dev/example/problems/database-unavailable";

    private Problems() {
    }

    static final String MEDIA_TYPE = "application/problem+json";
    static final String INVALID_REQUEST = "https://idempotency.dev/example/problems/invalid-request";
    static final String NOT_FOUND = "https://idempotency.dev/example/problems/not-found";

    static Response invalid(String detail) {
        return Response.status(400).type(MEDIA_TYPE).entity(json(INVALID_REQUEST, "Invalid request", 400, detail)).build();
    }

    static Response notFound(String detail) {
        return Response.status(404).type(MEDIA_TYPE).entity(json(NOT_FOUND, "Not found", 404, detail)).build();
    }

    /**
     * The problem for a refusal of the HTTP layer ({@link HttpErrors}, {@link ErrorPage}): {@code 400} is
     * {@code invalid-request}, {@code 404} {@code not-found}, any other status {@code about:blank} with the status's
     * reason phrase as its title (RFC 9457, 4.2.1). The detail never quotes the request.
     */
    static String forStatus(int status) {
        return switch (status) {
            case 400 -> json(INVALID_REQUEST, "Invalid request", 400, "The request could not be read: an empty or unreadable body, "
                    + "or a malformed parameter. Fix it and send it again");
            case 401 -> json("about:blank", "Unauthorized", 401, "Send valid credentials (HTTP Basic), or none to call anonymously");
            case 404 -> json(NOT_FOUND, "Not found", 404, "Nothing is served at this path");
            case 405 -> json("about:blank", "Method Not Allowed", 405, "This resource does not take this method; the Allow header lists those it takes");
            case 406 -> json("about:blank", "Not Acceptable", 406, "This resource cannot answer in a media type the Accept header allows");
            case 413 -> json("about:blank", "Content Too Large", 413, "The request body is larger than this server accepts");
            case 415 -> json("about:blank", "Unsupported Media Type", 415, "This resource does not take this Content-Type; send application/json");
            default -> {
                Response.Status known = Response.Status.fromStatusCode(status);
                String title = known != null ? known.getReasonPhrase() : status >= 500 ? "Server error" : "Request refused";
                yield json("about:blank", title, status, status >= 500 ? "The request failed on the server" : "The request was refused");
            }
        };
    }

    private static String json(String type, String title, int status, String detail) {
        return "{\"type\":\"" + type + "\",\"title\":\"" + title + "\",\"status\":" + status
                + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    }

    /**
     * 503 with {@code Retry-After: 1}: the request's database went away under it ({@link DatabaseUnavailable}).
     * The detail names neither the request nor the cause.
     */
    static Response databaseUnavailable() {
        String json = "{\"type\":\"" + DATABASE_UNAVAILABLE + "\",\"title\":\"Database unavailable\",\"status\":503,"
                + "\"detail\":\"The database could not be reached. Retry the same request later.\"}";
        return Response.status(503).header("Retry-After", "1").type("application/problem+json").entity(json).build();
    }
}
