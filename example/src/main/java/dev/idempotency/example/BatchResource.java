package dev.idempotency.example;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentResult;

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

import java.util.ArrayList;
import java.util.List;

/**
 * {@code POST /api/payments/batch}: a batch of payments, each with a key of its own, charged once per key whatever how
 * often the batch is sent, through the functional API ({@link Idempotency}): a retried batch charges only its new
 * items, and says of each item whether it was charged now or replayed. Each item runs in a transaction of its own.
 */
@Path("/payments/batch")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class BatchResource {

    /** At most this many items in one batch. */
    static final int MAX_ITEMS = 100;

    @Inject
    Idempotency idempotency;

    @Inject
    PaymentService payments;

    @Context
    SecurityContext security;

    /** A batch: {@code {"items": [{"key": "...", "amount": 1000, "currency": "EUR", "reference": "..."}, ...]}}. */
    public static class BatchRequest {
        public List<BatchItem> items;
    }

    /** One payment of a batch, with its key. */
    public static class BatchItem {
        public String key;
        public Long amount;
        public String currency;
        public String reference;
    }

    /** What makes an item this item: its fingerprint. */
    public record ItemRequest(long amount, String currency, String reference) {
    }

    /** Each item's outcome: {@code charged}, {@code replayed}, {@code in-progress} or {@code refused}. */
    public record ItemResult(String key, String outcome, PaymentView payment, String problem) {
    }

    public record BatchResult(List<ItemResult> items) {
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response charge(BatchRequest batch) throws Exception {
        if (batch == null || batch.items == null || batch.items.isEmpty() || batch.items.size() > MAX_ITEMS) {
            return Problems.invalid("A JSON body {\"items\": [...]} with 1 to " + MAX_ITEMS + " items is required");
        }
        String owner = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        List<ItemResult> results = new ArrayList<>();
        for (BatchItem item : batch.items) {
            PaymentRequest single = new PaymentRequest();
            single.amount = item.amount;
            single.currency = item.currency;
            single.reference = item.reference;
            Response invalid = PaymentsResource.validate(single);
            if (invalid != null) {
                results.add(new ItemResult(item.key, "refused", null, String.valueOf(invalid.getEntity())));
                continue;
            }
            try {
                IdempotentResult<PaymentView> r = idempotency.execute("payments-batch", item.key,
                        new ItemRequest(item.amount, item.currency, item.reference), PaymentView.class,
                        () -> PaymentView.of(payments.charge(item.amount, item.currency, item.reference, owner, 0, 0, false)));
                results.add(new ItemResult(item.key, r.replayed() ? "replayed" : "charged", r.value(), null));
            } catch (IdempotencyInProgressException e) {
                results.add(new ItemResult(item.key, "in-progress", null, e.getMessage()));
            } catch (IdempotencyKeyReusedException e) {
                results.add(new ItemResult(item.key, "refused", null, "the key was used for another payment"));
            } catch (IdempotencyException e) {
                results.add(new ItemResult(item.key, "refused", null, e.getMessage()));
            }
        }
        return Response.ok(new BatchResult(results)).build();
    }
}
