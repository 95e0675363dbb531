package dev.idempotency.http;

import jakarta.annotation.Priority;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.ext.Provider;

/**
 * An application's response filter that throws, on requests with the header {@code X-Break-Response: true} (not
 * part of a request's fingerprint: a retry without it is the same request). Its priority (6000) puts
 * it before the library's on the response side (response filters run from the highest priority down).
 */
@Provider
@Priority(6000)
public class BreakingResponseFilter implements ContainerResponseFilter {

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if ("true".equals(request.getHeaderString("X-Break-Response"))) {
            throw new IllegalStateException("an application's response filter failed");
        }
    }
}
