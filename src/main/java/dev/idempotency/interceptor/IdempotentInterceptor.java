package dev.idempotency.interceptor;

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
import dev.idempotency.runtime.LastCall;
import dev.idempotency.runtime.JsonCodec;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.Delivery;
import dev.idempotency.runtime.CallKey;
import dev.idempotency.runtime.RequestEnd;

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
            return CallKey.unprotected(ctx::proceed);
        }
        if (m.keySource() == KeySource.HTTP_HEADER) {
            // A resource method's key is the Idempotency-Key header: the JAX-RS filter claims it, once.
            if (!runtime.deployment().isHttpBound(ctx.getMethod())) {
                throw new IdempotencyConfigurationException("The @Idempotent resource method " + m.describe()
                        + " was called without the Idempotency-Key filter: it is registered by "
                        + "dev.idempotency.jaxrs.IdempotencyFeature, which the JAX-RS runtime did not pick up; "
                        + "register it in your Application, or call the method over HTTP");
            }
            // the key the filter claimed, for the keys of the messages the method sends
            RequestEnd request = runtime.requestEnd();
            RequestEnd.Claims claims = request == null ? null : request.claims(); // one look-up of the request's instance
            if (claims != null) {
                claims.watchArguments(ctx.getParameters()); // an answer to come through an argument, from now on
            }
            ScopedKey key = claims == null ? null : claims.callKey();
            Object result = key == null ? CallKey.unprotected(ctx::proceed) : CallKey.during(key, ctx::proceed);
            // an answer that comes later is followed to its end, where a claim its filter never saw is settled
            return claims == null ? result : claims.watchAnswer(ctx.getParameters(), result);
        }
        // What the method's arguments carry (a key, a message to answer) was chosen when the application started.
        CallReader reader = runtime.deployment().readerFor(m);
        Delivery delivery = reader.delivery(ctx.getParameters(), runtime::transactionRegistry);
        if (delivery == null) {
            return intercept(ctx, m, reader, null);
        }
        try {
            return intercept(ctx, m, reader, delivery);
        } catch (Exception e) {
            return delivery.refused(e); // a consumer's failure refuses its message
        }
    }

    private Object intercept(InvocationContext ctx, MethodSettings m, CallReader reader, Delivery delivery) throws Exception {
        Object[] args = ctx.getParameters();
        String key = keyOf(m, reader.key(args));
        if (key == null) {
            if (m.required()) {
                engine.observer().keyRejected(m.namespace(), true);
                LOG.log(Level.FINE, "Rejected a call of {0}: no key", m.describe());
                throw new IdempotencyKeyMissingException("No idempotency key for " + m.describe() + ": " + reader.noKey(args));
            }
            return CallKey.unprotected(() -> delivery != null ? delivery.withoutKey(ctx) : ctx.proceed());
        }
        LastCall.forget();
        JsonCodec codec = runtime.codec();
        ScopedKey scopedKey = runtime.atRest(new ScopedKey(m.namespace(), callers.principalName(runtime.settings().scopeByPrincipal()), key));
        String fingerprint = reader.fingerprint(args, codec);
        if (delivery != null) {
            delivery.prepare(ctx);
        }
        Object[] handedBack = new Object[1];
        // The method's flow (atomic, optimistic or leased) was chosen when the application started.
        AtomicOutcome<Object> outcome = runtime.flow(m).run(scopedKey, fingerprint, null, m.policy(), new AtomicCall<>() {
            @Override
            public Object run() throws Exception {
                if (delivery == null) {
                    return CallKey.during(scopedKey, ctx::proceed);
                }
                delivery.attempt();
                // A consumer stores no value: that it ran is the answer.
                handedBack[0] = delivery.ran(CallKey.during(scopedKey, ctx::proceed));
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
                return (delivery == null || !delivery.releases(failure)) && m.keeps(failure);
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
        if (delivery != null) {
            if (outcome instanceof AtomicOutcome.Replayed<Object>) {
                delivery.superseded(); // whether it ran here or not, the record is answered as a duplicate
            }
            delivery.returned();
            if (outcome instanceof AtomicOutcome.Replayed<Object> replayed) {
                IdempotencyRecord record = replayed.record();
                LastCall.remember(new IdempotentResult<>(null, true, record.completedAt()));
                return delivery.duplicate(() -> record.status() == RecordStatus.FAILED ? codec.decodeFailure(m, record.response()) : null);
            }
            LastCall.remember(new IdempotentResult<>(null, false, java.time.Instant.now()));
            return delivery.answer(handedBack[0]);
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

    static IdempotencyResultNotStorableException notStorable(MethodSettings m, ScopedKey key, RuntimeException e) {
        return new IdempotencyResultNotStorableException("The result of " + m.describe() + " for the " + key
                + " ran but could not be stored (" + e.getClass().getName() + "); the key is free again", e);
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
