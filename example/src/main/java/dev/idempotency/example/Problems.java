package dev.idempotency.example;

import jakarta.ws.rs.core.Response;

/** RFC 9457 answers for bad input. */
final class Problems {

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
}
