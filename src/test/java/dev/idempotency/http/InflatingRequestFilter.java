package dev.idempotency.http;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.ext.Provider;

import java.io.IOException;
import java.util.zip.GZIPInputStream;

/**
 * An application's request filter that inflates a body sent with {@code Content-Encoding: gzip} and leaves the header's
 * {@code Content-Length} (the compressed size) as it came: the body the library reads then goes on past its declared
 * length.
 */
@Provider
@Priority(Priorities.ENTITY_CODER)
public class InflatingRequestFilter implements ContainerRequestFilter {

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        if ("gzip".equalsIgnoreCase(request.getHeaderString("Content-Encoding"))) {
            request.setEntityStream(new GZIPInputStream(request.getEntityStream()));
        }
    }
}
