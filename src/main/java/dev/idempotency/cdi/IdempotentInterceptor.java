package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentResult;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyResultNotStorableException;
import dev.idempotency.config.KeySource;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.core.AtomicCall;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.KeyRules;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import java.util.concurrent.CompletableFuture;
import java.util.logging.Level;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The {@code @Idempotent} interceptor: check, proceed, store. Its priority (default 1100,
 * {@code idempotency.interceptor.priority}) puts it inside {@code @Transactional} (200), so that the claim
 * and the completion join the business transaction (atomic claims), or at least the completion does (leased
 * claims). Everything about the method was resolved at deployment.
 */
@Idempotent
@Interceptor
public class IdempotentInterceptor {

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(IdempotentInterceptor.class.getName());

    // Field injection and a no-argument constructor: EJB containers create interceptors that way.
    @Inject
    IdempotencyRuntime runtime;

    @Inject
    Callers callers;

    @Inject
    IdempotencyEngine engine;

    @AroundInvoke
    Object around(InvocationContext ctx) throws Exception {
        Object target = ctx.getTarget();
        MethodSettings m = runtime.deployment().settingsFor(target == null ? null : target.getClass(), ctx.getMethod());
        if (!m.enabled()) {
            return ctx.proceed();
        }
        if (m.keySource() == KeySource.HTTP_HEADER) {
            // A resource method's key is the Idempotency-Key header: the JAX-RS filter claims it, once.
            if (!runtime.deployment().isHttpBound(ctx.getMethod())) {
                throw new IdempotencyConfigurationException("The @Idempotent resource method " + m.describe()
                        + " was called without the Idempotency-Key filter: it is registered by "
                        + "dev.idempotency.jaxrs.IdempotencyFeature, which the JAX-RS runtime did not pick up; "
                        + "register it in your Application, or call the method over HTTP");
            }
            return ctx.proceed();
        }
        if (m.incoming() != null && m.incoming().takesMessage()) {
            // A consumer that takes the Message settles it: a failure refuses it (a nack, its transaction marked for
            // rollback first). Thrown, it would end the channel's stream: SmallRye acknowledges such methods manually, and
            // does not nack a record whose method threw.
            Object message = ctx.getParameters()[0];
            ReactiveMessages.Settlement settlement = new ReactiveMessages.Settlement();
            try {
                return intercept(ctx, m, settlement);
            } catch (Exception e) {
                LOG.log(Level.FINE, "{0} refused a record", new Object[] {m.describe(), e});
                return ReactiveMessages.refuse(message, runtime.transactionRegistry(), e, settlement);
            }
        }
        return intercept(ctx, m, null);
    }

    private Object intercept(InvocationContext ctx, MethodSettings m, ReactiveMessages.Settlement settlement) throws Exception {
        Object[] args = ctx.getParameters();
        boolean jms = m.keySource() == KeySource.JMS_MESSAGE;
        boolean record = m.keySource() == KeySource.RECORD;
        String key = keyOf(m, jms ? JmsMessages.key(args[0], m.messageProperty())
                : record ? ReactiveMessages.key(args[0], m.messageProperty()) : m.keyOf(args));
        if (key == null) {
            if (m.required()) {
                engine.observer().keyRejected(m.namespace(), true);
                LOG.log(Level.FINE, "Rejected a call of {0}: no key", m.describe());
                throw new IdempotencyKeyMissingException("No idempotency key for " + m.describe()
                        + (jms ? ": the message has no " + (m.messageProperty() == null ? "JMS message id" : "property " + m.messageProperty())
                        : record ? ": " + ReactiveMessages.missing(args[0], m.messageProperty())
                        : m.keyInside() == null ? ": its @IdempotencyKey parameter is null or blank"
                        : ": its key " + m.keyInside().description() + " is null or blank, or the parameter is null"));
            }
            if (settlement != null) {
                return withoutKey(ctx, args, settlement);
            }
            return ctx.proceed();
        }
        LastCall.forget();
        JsonCodec codec = runtime.codec();
        ScopedKey scopedKey = runtime.atRest(new ScopedKey(m.namespace(), callers.principalName(runtime.settings().scopeByPrincipal()), key));
        String fingerprint = jms ? JmsMessages.fingerprint(m.namespace(), args[0])
                : record ? ReactiveMessages.fingerprint(m.namespace(), args[0], codec) : codec.fingerprint(m, args);
        // A consumer's record (an @Incoming method): a Message it acknowledges itself is acknowledged once the method's
        // transaction commits; what the method returns (the acknowledgement's stage) is handed back once it ran.
        MethodSettings.Incoming incoming = m.incoming();
        Object message = incoming != null && incoming.takesMessage() ? args[0] : null;
        Object registry = message != null ? runtime.transactionRegistry() : null;
        if (message != null) {
            args[0] = ReactiveMessages.ackingAfterCommit(message, registry, settlement);
            ctx.setParameters(args);
        }
        Object[] returned = new Object[1];
        // The method's flow (atomic or leased) was chosen when the application started.
        AtomicOutcome<Object> outcome = runtime.flow(m).run(scopedKey, fingerprint, null, m.policy(), new AtomicCall<>() {
            @Override
            public Object run() throws Exception {
                if (settlement != null) {
                    settlement.attempt();
                    ReactiveMessages.enlist(registry, settlement);
                }
                Object result = ctx.proceed();
                if (incoming == null) {
                    return result;
                }
                if (settlement != null && settlement.nacked() != null) {
                    throw sneaky(settlement.nacked()); // the method refused its record: a failure, as if it had thrown
                }
                // A consumer stores no value: that it ran is the answer. A stage that already failed is its failure.
                Throwable failed = ReactiveMessages.failure(result);
                if (failed != null) {
                    throw sneaky(failed);
                }
                returned[0] = result;
                return null;
            }

            @Override
            public byte[] response(Object result) {
                try {
                    return codec.encodeValue(m, result);
                } catch (RuntimeException e) {
                    throw notStorable(m, scopedKey, e); // the flow then gives the claim up
                }
            }

            @Override
            public boolean keeps(Throwable failure) {
                return m.keeps(failure);
            }

            @Override
            public byte[] failure(Throwable failure) {
                return codec.encodeFailure(failure);
            }

            @Override
            public boolean async() {
                return m.async();
            }
        });
        if (settlement != null) {
            settlement.returned();
        }
        if (outcome instanceof AtomicOutcome.Replayed<Object> replayed && incoming != null) {
            LastCall.remember(new IdempotentResult<>(null, true, replayed.record().completedAt()));
            return duplicateRecord(m, incoming, codec, replayed.record(), message, registry, settlement);
        }
        if (incoming != null) {
            LastCall.remember(new IdempotentResult<>(null, false, java.time.Instant.now()));
        }
        if (message != null) {
            return settleReturned(returned[0], message, settlement);
        }
        if (incoming != null) {
            return returned[0] != null || !incoming.returnsStage() ? returned[0] : CompletableFuture.completedFuture(null);
        }
        if (outcome instanceof AtomicOutcome.Replayed<Object> replayed) {
            Object value = replay(m, codec, replayed.record());
            LastCall.remember(new IdempotentResult<>(value, true, replayed.record().completedAt()));
            return value;
        }
        Object value = ((AtomicOutcome.Ran<Object>) outcome).value();
        LastCall.remember(new IdempotentResult<>(value, false, java.time.Instant.now()));
        return value;
    }

    /**
     * A consumer of the Message whose record has no key (and need not have one): it runs, as without the library, but
     * its record is settled as a keyed one's is: acknowledged once its work committed (or the call returned, outside a
     * transaction), refused when it fails.
     */
    private Object withoutKey(InvocationContext ctx, Object[] args, ReactiveMessages.Settlement settlement) throws Exception {
        Object message = args[0];
        Object registry = runtime.transactionRegistry();
        args[0] = ReactiveMessages.ackingAfterCommit(message, registry, settlement);
        ctx.setParameters(args);
        ReactiveMessages.enlist(registry, settlement);
        Object result = ctx.proceed();
        if (settlement.nacked() != null) {
            throw sneaky(settlement.nacked());
        }
        Throwable failed = ReactiveMessages.failure(result);
        if (failed != null) {
            throw sneaky(failed);
        }
        settlement.returned();
        return settleReturned(result, message, settlement);
    }

    /**
     * A consumer of the Message that ran: its record refused if the method acknowledged it in a transaction that rolled
     * back, acknowledged if it asked for that outside a transaction; its stage handed back, refusing the record if it
     * fails later.
     */
    private static Object settleReturned(Object result, Object message, ReactiveMessages.Settlement settlement) {
        if (settlement.rolledBack()) {
            // The method acknowledged its record in a transaction that rolled back (marked for rollback, say): refused,
            // so that it comes again.
            return ReactiveMessages.settle(message, null, ReactiveMessages.rolledBack(), settlement);
        }
        Object stage = result != null ? result : CompletableFuture.completedFuture(null);
        return ReactiveMessages.refusingLateFailures(stage, message, settlement);
    }

    static IdempotencyResultNotStorableException notStorable(MethodSettings m, ScopedKey key, RuntimeException e) {
        return new IdempotencyResultNotStorableException("The result of " + m.describe() + " for the " + key
                + " ran but could not be stored (" + e.getClass().getName() + "); the key is free again", e);
    }

    /**
     * A consumer's answer to a duplicate of a record it handled: acknowledged without running (the first delivery's
     * work is done); a kept failure too, unless {@code keptFailures=nack}, which refuses it as its first delivery was.
     */
    private static Object duplicateRecord(MethodSettings m, MethodSettings.Incoming incoming, JsonCodec codec, IdempotencyRecord record,
                                          Object message, Object registry, ReactiveMessages.Settlement settlement) throws Exception {
        Throwable failure = record.status() == RecordStatus.FAILED && incoming.nackKeptFailures()
                ? codec.decodeFailure(m, record.response()) : null;
        if (message != null) {
            return ReactiveMessages.settle(message, registry, failure, settlement);
        }
        if (failure != null) {
            if (incoming.returnsStage()) {
                return CompletableFuture.failedFuture(failure);
            }
            throw sneaky(failure);
        }
        return incoming.returnsStage() ? CompletableFuture.completedFuture(null) : null;
    }

    private Object replay(MethodSettings m, JsonCodec codec, IdempotencyRecord record) throws Exception {
        if (record.status() == RecordStatus.FAILED) {
            Throwable failure = codec.decodeFailure(m, record.response());
            if (m.async()) {
                return CompletableFuture.failedFuture(failure);
            }
            throw sneaky(failure);
        }
        Object value = codec.decodeValue(m, record.response());
        return m.async() ? CompletableFuture.completedFuture(value) : value;
    }

    private String keyOf(MethodSettings m, Object raw) {
        if (raw == null) {
            return null;
        }
        String key = raw.toString();
        if (key.isBlank()) {
            return null;
        }
        String problem = KeyRules.problem(key, runtime.settings().maxKeyLength());
        if (problem != null) {
            engine.observer().keyRejected(m.namespace(), false);
            LOG.log(Level.FINE, "Rejected a call of {0}: its key {1}", new Object[] {m.describe(), problem});
            throw new IdempotencyKeyInvalidException("The idempotency key for " + m.describe() + " " + problem);
        }
        return key;
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
