package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.Delivery;

import jakarta.interceptor.InvocationContext;

import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A consumer that takes the {@code Message} and acknowledges it itself, whichever broker it came from: the message
 * the method gets has its acknowledgement wait for the method's transaction ({@link Settlement} says when it is
 * answered). A failure refuses it (a nack, its transaction marked for rollback first): thrown, it would end the
 * channel's stream, since SmallRye acknowledges such methods manually and does not nack a record whose method threw.
 */
final class MessageDelivery implements Delivery {

    private static final Logger LOG = Logger.getLogger(MessageDelivery.class.getName());

    private final Message<?> message;
    /** The JTA {@code TransactionSynchronizationRegistry}, or {@code null} where there is none. */
    private final Object registry;
    private final MethodSettings method;
    private final MethodSettings.Incoming incoming;
    private final Settlement settlement = new Settlement();

    MessageDelivery(Object message, Object registry, MethodSettings method) {
        this.message = (Message<?>) message;
        this.registry = registry;
        this.method = method;
        this.incoming = method.incoming();
    }

    @Override
    public void prepare(InvocationContext ctx) {
        Object[] args = ctx.getParameters();
        args[0] = ackingAfterCommit(message, registry, settlement);
        ctx.setParameters(args);
    }

    /**
     * The call's work is about to run: the transaction it runs in, if any, is the one every acknowledgement the method
     * asks for waits for.
     */
    @Override
    public void attempt() {
        settlement.attempt();
        if (registry != null) {
            AfterCommit.enlist(registry, settlement);
        }
    }

    @Override
    public void superseded() {
        settlement.attempt(); // the run's own acknowledgement or refusal, and its transaction's end, no longer count
    }

    @Override
    public Object ran(Object result) throws Exception {
        if (settlement.nacked() != null) {
            throw Stages.<Exception>sneaky(settlement.nacked()); // the method refused its record: a failure, as if it had thrown
        }
        if (settlement.workEnded()) {
            // The method acknowledged its record in a transaction that rolled back (a bean's REQUIRES_NEW, say): its work
            // did not all happen. A failure, so that the claim is not stored done and the record comes again.
            throw Settlement.rolledBackFailure();
        }
        Throwable failed = Stages.failure(result);
        if (failed != null) {
            throw Stages.<Exception>sneaky(failed);
        }
        return result;
    }

    /** The library's own "not done" is never the call's outcome to keep. */
    @Override
    public boolean releases(Throwable failure) {
        return failure instanceof Settlement.NotDone;
    }

    @Override
    public void returned() {
        settlement.returned();
    }

    /**
     * A call that ran: its record refused if the method acknowledged it in a transaction that rolled back, acknowledged
     * if it asked for that outside a transaction; its stage handed back, refusing the record if it fails later.
     */
    @Override
    public Object answer(Object kept) {
        if (settlement.rolledBack()) {
            // The method acknowledged its record in a transaction that rolled back (marked for rollback, say): refused,
            // so that it comes again.
            return settle(Settlement.rolledBackFailure(), null);
        }
        Object stage = kept != null ? kept : CompletableFuture.completedFuture(null);
        return refusingLateFailures(stage);
    }

    /**
     * A duplicate of a record handled before: acknowledged without running (the first delivery's work is done); a kept
     * failure too, unless {@code keptFailures=nack}, which refuses it as its first delivery was.
     */
    @Override
    public Object duplicate(Supplier<Throwable> keptFailure) {
        return settle(incoming.nackKeptFailures() ? keptFailure.get() : null, registry);
    }

    /**
     * Refuses a record whose call failed: the transaction it ran in (the caller's, still open) is marked for rollback,
     * and the record nacked with the failure.
     */
    @Override
    public Object refused(Exception failure) {
        // A message without a key is the sender's mistake, never run: said where an operator looks (a reused key or a
        // failure of the method's own is the application's business, as without the library)
        LOG.log(failure instanceof dev.idempotency.IdempotencyKeyMissingException ? Level.WARNING : Level.FINE,
                "{0} refused a record: {1}", new Object[] {method.describe(), failure});
        if (registry != null) {
            AfterCommit.markRollbackOnly(registry);
        }
        return settlement.once(message, failure);
    }

    /**
     * A record with no key (which need not have one): it runs, as without the library, but is settled as a keyed one's
     * is: acknowledged once its work committed (or the call returned, outside a transaction), refused when it fails.
     */
    @Override
    public Object withoutKey(InvocationContext ctx) throws Exception {
        prepare(ctx);
        if (registry != null) {
            AfterCommit.enlist(registry, settlement);
        }
        Object result = ran(ctx.proceed());
        returned();
        return answer(result);
    }

    /**
     * The message as the method gets it: its acknowledgement, asked for inside a transaction, is done once that
     * transaction commits, and a transaction that rolls back nacks it instead; asked for outside a transaction, it is
     * done once the call returned without failing (a call that fails refuses the record instead).
     *
     * <p>A transaction that rolls back while the call is still in the library's hands refuses nothing: the library
     * settles the record itself (a failure is refused, see {@link #refused}; a duplicate that lost an optimistic race
     * is acknowledged, its key being done). Once the call returned, a rollback refuses the record. A nack the method
     * asks for while the call runs is its failure: the call fails with it, and the library refuses the record. A record
     * is settled once: the first acknowledgement or refusal counts, any later one is ignored.
     */
    static Message<?> ackingAfterCommit(Message<?> message, Object registry, Settlement returned) {
        if (Reflection.publicMethod(Message.class, "getMetadata") != null) {
            // SmallRye's Message (its API declares metadata): withAck and withNack keep the metadata, the broker's
            // record's among them. A nack asked for while the call runs is the method's failure: the library refuses it.
            return message.withAck(() -> returned.asked(message, registry, null))
                    .withNack(failure -> returned.asked(message, registry, failure));
        }
        return new AckingAfterCommit<>(message, registry, returned);
    }

    /** Another connector's message (Open Liberty's), as it is but for its acknowledgement: {@code unwrap} still reaches its record. */
    private record AckingAfterCommit<T>(Message<T> message, Object registry, Settlement returned)
            implements Message<T> {
        @Override
        public T getPayload() {
            return message.getPayload();
        }

        @Override
        public CompletionStage<Void> ack() {
            return returned.asked(message, registry, null);
        }

        @Override
        public CompletionStage<Void> nack(Throwable reason) {
            return returned.asked(message, registry, reason);
        }

        @Override
        public java.util.function.Supplier<CompletionStage<Void>> getAck() {
            return this::ack;
        }

        @Override
        public java.util.function.Function<Throwable, CompletionStage<Void>> getNack() {
            return this::nack;
        }

        @Override
        public <C> C unwrap(Class<C> type) {
            return type.isInstance(this) ? type.cast(this) : message.unwrap(type);
        }
    }

    /**
     * Acknowledges the call's message (or nacks it, with {@code failure}) once the current transaction ends; at once
     * outside one ({@code registry} {@code null}).
     */
    private CompletionStage<Void> settle(Throwable failure, Object registry) {
        if (registry == null) {
            return settlement.once(message, failure);
        }
        return AfterCommit.settle(message, registry, failure, settlement);
    }

    /**
     * What the method returns, handed back: a stage that fails after the call returned refuses the record with its
     * failure (the work done before the return stands), and completes, so that the channel goes on.
     */
    private Object refusingLateFailures(Object result) {
        if (!(result instanceof CompletionStage<?> stage)) {
            return result;
        }
        return stage.handle((v, e) -> e).thenCompose(e -> e == null ? CompletableFuture.<Void>completedFuture(null)
                : settlement.asked(message, null, e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e)
                        .exceptionally(nackFailed -> null));
    }
}
