package dev.idempotency.example;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * The interceptor door's answers over HTTP ({@code POST /api/transfers}, whose key is inside the service's command):
 * a transfer id reused with another transfer is {@code 422}, one still running {@code 409} with {@code Retry-After},
 * with the library's problem types, as its HTTP filter answers for {@code POST /api/payments}. The detail names
 * neither the request nor the stored result.
 */
public final class IdempotencyProblems {

    private IdempotencyProblems() {
    }

    /** The same key with another request. */
    @Provider
    public static final class OnReused implements ExceptionMapper<IdempotencyKeyReusedException> {
        @Override
        public Response toResponse(IdempotencyKeyReusedException e) {
            return problem(422, "key-reused", "Idempotency key reused",
                    "This key was already used for a different request. Use a new key for a new request.", null);
        }
    }

    /** The same key while the first one runs. */
    @Provider
    public static final class OnInProgress implements ExceptionMapper<IdempotencyInProgressException> {
        @Override
        public Response toResponse(IdempotencyInProgressException e) {
            long seconds = Math.max(1, e.retryAfter().toSeconds());
            return problem(409, "request-in-progress", "Request in progress",
                    "A request with this key is still being processed. Retry after " + seconds + " s.", seconds);
        }
    }

    private static Response problem(int status, String type, String title, String detail, Long retryAfter) {
        String json = "{\"type\":\"https://idempotency.dev/problems/" + type + "\",\"title\":\"" + title + "\",\"status\":" + status
                + ",\"detail\":\"" + detail + "\"}";
        Response.ResponseBuilder b = Response.status(status).type("application/problem+json").entity(json);
        if (retryAfter != null) {
            b.header("Retry-After", retryAfter);
        }
        return b.build();
    }
}
