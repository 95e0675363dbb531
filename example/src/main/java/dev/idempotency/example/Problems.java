package dev.idempotency.example;

import jakarta.ws.rs.core.Response;

/** RFC 9457 answers: bad input, not found, and the database out of reach. */
final class Problems {

    /** The type of {@link #databaseUnavailable()}. */
    static final String DATABASE_UNAVAILABLE = "https://idempotency.dev/example/problems/database-unavailable";

    private Problems() {
    }

    static Response invalid(String detail) {
        String json = "{\"type\":\"https://idempotency.dev/example/problems/invalid-request\",\"title\":\"Invalid request\","
                + "\"status\":400,\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
        return Response.status(400).type("application/problem+json").entity(json).build();
    }

    static Response notFound(String detail) {
        String json = "{\"type\":\"https://idempotency.dev/example/problems/not-found\",\"title\":\"Not found\","
                + "\"status\":404,\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
        return Response.status(404).type("application/problem+json").entity(json).build();
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
