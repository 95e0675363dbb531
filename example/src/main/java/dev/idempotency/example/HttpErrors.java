package dev.idempotency.example;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

import java.util.List;
import java.util.Map;

/**
 * What the JAX-RS runtime refuses by itself (no resource at the path, a method or media type it does not take, a body
 * it cannot read, such as an empty one) is answered {@code application/problem+json} like every other refusal of
 * the example, not with the server's HTML page: the runtime throws a {@link WebApplicationException} without an
 * entity, and the specification sends exactly those to a mapper. Its status and headers ({@code Allow},
 * {@code WWW-Authenticate}, {@code Retry-After}) are kept; a response with an entity never reaches here. A 5xx passes
 * as it is.
 */
@Provider
public final class HttpErrors implements ExceptionMapper<WebApplicationException> {

    @Override
    public Response toResponse(WebApplicationException e) {
        Response original = e.getResponse();
        int status = original.getStatus();
        if (status < 400 || status >= 500) {
            return original;
        }
        Response.ResponseBuilder b = Response.status(status).type(Problems.MEDIA_TYPE).entity(Problems.forStatus(status));
        for (Map.Entry<String, List<Object>> h : original.getHeaders().entrySet()) {
            if (!h.getKey().equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) && !h.getKey().equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH)) {
                h.getValue().forEach(v -> b.header(h.getKey(), v));
            }
        }
        return b.build();
    }
}
