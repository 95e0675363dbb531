package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import java.net.URI;

/**
 * {@code POST /api/orders}: a public API whose anonymous clients name themselves in {@code X-Client-Id}: each
 * client's keys are its own scope (a keyed request with neither credentials nor that header is {@code 401}). The key
 * is the {@code Idempotency-Key} header, or without one the body's {@code orderId}; only the order id, amount and
 * currency are the request, so that a retry with another {@code placedAt} is replayed.
 */
@Path("/orders")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class OrdersResource {

    /** The request header an anonymous client names itself in. */
    static final String CLIENT_ID = "X-Client-Id";

    @Inject
    PaymentService payments;

    @Context
    SecurityContext security;

    @POST
    @Idempotent(anonymous = "header:" + CLIENT_ID, keyFrom = "/orderId",
            fingerprintFields = {"/orderId", "/amount", "/currency"})
    @Consumes(MediaType.APPLICATION_JSON)
    public Response place(OrderRequest order) {
        if (order == null || order.orderId == null || order.orderId.isBlank() || order.orderId.length() > 100) {
            return Problems.invalid("orderId is required (1 to 100 characters)");
        }
        PaymentRequest charge = new PaymentRequest();
        charge.amount = order.amount;
        charge.currency = order.currency;
        charge.reference = order.orderId;
        Response invalid = PaymentsResource.validate(charge);
        if (invalid != null) {
            return invalid;
        }
        String owner = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        Payment p = payments.charge(order.amount, order.currency, order.orderId, owner, 0, 0, false);
        return Response.created(URI.create("/api/payments/" + p.getId())).entity(PaymentView.of(p)).build();
    }
}
