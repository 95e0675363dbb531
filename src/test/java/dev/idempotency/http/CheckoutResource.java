package dev.idempotency.http;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKeys;
import dev.idempotency.testing.RabbitMq;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;

import java.io.IOException;
import java.util.Map;
import java.util.UUID;

/**
 * A checkout that publishes an "order placed" message to RabbitMQ (confirmed by the broker, outside any transaction)
 * and then may fail: a 503 frees the key, and the client's retry publishes again. With {@code derived=true} the message
 * carries, in the {@code Idempotency-Key} header its consumer reads, the key derived from the request's; each send has a
 * message-id of its own either way.
 */
@Path("/checkout")
@RequestScoped
public class CheckoutResource {

    /** The broker connection and queue the test sets. */
    static volatile RabbitMq broker;
    static volatile String queue;

    @POST
    @Idempotent
    public Response post(@QueryParam("order") String order, @QueryParam("fail") boolean fail,
                         @QueryParam("derived") boolean derived) throws IOException {
        Counters.executions.incrementAndGet();
        // the header the consumer names as its key's (messageProperty = "Idempotency-Key")
        Map<String, Object> headers = derived ? Map.of("Idempotency-Key", IdempotencyKeys.derive("order-placed")) : Map.of();
        broker.publish(queue, order, UUID.randomUUID().toString(), headers);
        if (fail) {
            return Response.status(503).entity("the checkout failed after its message was sent").build();
        }
        return Response.status(201).entity("placed " + order).build();
    }
}
