package dev.idempotency.http;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyReusedException;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * A key inside the command, over HTTP: the resource is not {@code @Idempotent}; it hands the JSON body, a command that
 * carries its own key, to an {@code @Idempotent} service (the interceptor door).
 */
@Path("/commands")
@RequestScoped
public class CommandResource {

    public record PlaceOrder(@IdempotencyKey String orderId, long amount, String currency) {
    }

    public record Placed(String orderId, long amount, int run) {
    }

    @ApplicationScoped
    public static class Orders {
        @Idempotent
        public Placed place(PlaceOrder order) {
            return new Placed(order.orderId(), order.amount(), Counters.executions.incrementAndGet());
        }
    }

    @Inject
    Orders orders;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response place(PlaceOrder order) {
        try {
            return Response.ok(orders.place(order)).build();
        } catch (IdempotencyKeyReusedException e) {
            return Response.status(422).build();
        }
    }
}
