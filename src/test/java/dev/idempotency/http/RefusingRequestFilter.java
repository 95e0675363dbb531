package dev.idempotency.http;

import jakarta.annotation.Priority;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.Provider;

/**
 * An application's request filter that refuses requests with the header {@code X-Refuse: <status>} (a rate limiter's
 * 429, an authorisation check's 403) before the resource runs. Its priority (6000) is past {@code Priorities.USER}, where
 * the application's own filters sit.
 */
@Provider
@Priority(6000)
public class RefusingRequestFilter implements ContainerRequestFilter {

    @Override
    public void filter(ContainerRequestContext request) {
        String status = request.getHeaderString("X-Refuse");
        if (status != null) {
            request.abortWith(Response.status(Integer.parseInt(status)).build());
        }
    }
}
