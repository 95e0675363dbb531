package dev.idempotency.functional;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyOptions;
import dev.idempotency.IdempotencyResultNotStorableException;
import dev.idempotency.IdempotentResult;
import dev.idempotency.OnConcurrent;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.StorableTypes;
import dev.idempotency.core.AtomicCall;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.ClaimFlow;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.Callable;
import dev.idempotency.runtime.LastCall;
import dev.idempotency.runtime.JsonCodec;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;

/**
 * {@link Idempotency} with one set of options: a call is checked (key, result type, claim mode) before anything runs,
 * then run through the flow of its claim mode, as an {@code @Idempotent} method's call is.
 */
final class FunctionalIdempotency implements Idempotency {

    private static final int MAX_NAMESPACE = 200;

    private final IdempotencyRuntime runtime;
    private final Callers callers;
    private final IdempotencyOptions options;

    FunctionalIdempotency(IdempotencyRuntime runtime, Callers callers, IdempotencyOptions options) {
        this.runtime = runtime;
        this.callers = callers;
        this.options = options;
    }

    @Override
    public Idempotency with(IdempotencyOptions options) {
        return new FunctionalIdempotency(runtime, callers, java.util.Objects.requireNonNull(options, "options"));
    }

    @Override
    public <R> R call(String namespace, String key, Object request, Class<R> resultType, Callable<R> work) throws Exception {
        return execute(namespace, key, request, resultType, work).value();
    }

    @Override
    public <R> IdempotentResult<R> execute(String namespace, String key, Object request, Class<R> resultType, Callable<R> work)
            throws Exception {
        java.util.Objects.requireNonNull(resultType, "resultType");
        java.util.Objects.requireNonNull(work, "work");
        LastCall.forget();
        GlobalSettings global = runtime.settings();
        String where = "the idempotent call in namespace '" + namespace + "'";
        if (namespace == null || namespace.isBlank() || namespace.length() > MAX_NAMESPACE) {
            throw new IdempotencyConfigurationException("The namespace of an idempotent call must be 1 to " + MAX_NAMESPACE
                    + " characters, not " + (namespace == null ? "null" : "'" + namespace + "'"));
        }
        boolean voidResult = resultType == void.class || resultType == Void.class;
        String unstorable = voidResult ? null : StorableTypes.problem(resultType);
        if (unstorable != null) {
            throw new IdempotencyConfigurationException("The result type " + resultType.getName() + " of " + where
                    + " cannot be stored: " + unstorable + ". Use a concrete type (a record, a class with a no-argument constructor)");
        }
        ClaimFlow flow = flow(where);
        if (key == null || key.isBlank()) {
            if (options.required() == null ? global.required() : options.required()) {
                runtime.engine().observer().keyRejected(namespace, true);
                throw new IdempotencyKeyMissingException("No idempotency key for " + where + ": the key is null or blank");
            }
            return new IdempotentResult<>(dev.idempotency.runtime.CallKey.unprotected(work), false, null); // not required: runs unprotected
        }
        String problem = KeyRules.problem(key, global.maxKeyLength());
        if (problem != null) {
            runtime.engine().observer().keyRejected(namespace, false);
            throw new IdempotencyKeyInvalidException("The idempotency key for " + where + " " + problem);
        }
        JsonCodec codec = runtime.codec();
        ScopedKey scopedKey = runtime.atRest(new ScopedKey(namespace, callers.principalName(global.scopeByPrincipal()), key));
        String fingerprint = Fingerprint.start().add(namespace).add(request == null ? null
                : codec.json(request).getBytes(StandardCharsets.UTF_8)).hex();
        Instant started = Instant.now();
        AtomicOutcome<R> outcome = flow.run(scopedKey, fingerprint, null, policy(global), new AtomicCall<>() {
            @Override
            public R run() throws Exception {
                return dev.idempotency.runtime.CallKey.during(scopedKey, work);
            }

            @Override
            public byte[] response(R result) {
                try {
                    return codec.encodeValue(resultType, voidResult, result);
                } catch (RuntimeException e) {
                    throw new IdempotencyResultNotStorableException("The result of " + where + " for the " + scopedKey
                            + " ran but could not be stored (" + e.getClass().getName() + "); the key is free again", e);
                }
            }

            @Override
            public boolean keeps(Throwable failure) {
                return dev.idempotency.config.MethodSettings.keeps(failure, options.keepOn(), options.releaseOn());
            }

            @Override
            public byte[] failure(Throwable failure) {
                return codec.encodeFailure(failure);
            }
        });
        IdempotentResult<R> result;
        if (outcome instanceof AtomicOutcome.Replayed<R> replayed) {
            IdempotencyRecord record = replayed.record();
            if (record.status() == RecordStatus.FAILED) {
                throw sneaky(codec.decodeFailure(options.keepOn(), resultType.getClassLoader() == null
                        ? Thread.currentThread().getContextClassLoader() : resultType.getClassLoader(), where, record.response()));
            }
            result = new IdempotentResult<>(resultType.cast(codec.decodeValue(resultType, voidResult, record.response())), true,
                    record.completedAt());
        } else {
            result = new IdempotentResult<>(((AtomicOutcome.Ran<R>) outcome).value(), false, started);
        }
        LastCall.remember(result);
        return result;
    }

    /** The flow of the options' claim mode; one that cannot work here is refused before anything runs. */
    private ClaimFlow flow(String where) {
        IdempotencyEngine engine = runtime.engine();
        ClaimMode claim = options.claim() != ClaimMode.DEFAULT ? options.claim() : runtime.settings().claim();
        boolean inTransaction = claim == ClaimMode.ATOMIC || claim == ClaimMode.OPTIMISTIC;
        if (inTransaction && runtime.connectionProblem() != null) {
            throw new IdempotencyConfigurationException(where + " asks for claim " + claim + ", but " + runtime.connectionProblem()
                    + "; or use claim = ClaimMode.LEASED");
        }
        if (inTransaction && !engine.supportsAtomicClaims()) {
            throw new IdempotencyConfigurationException(where + " asks for claim " + claim + ", but "
                    + (engine.store() instanceof dev.idempotency.spi.AtomicClaims ? "there is no JTA transaction manager"
                    : "the store " + engine.store().getClass().getName() + " cannot claim inside a transaction")
                    + ": use claim = ClaimMode.LEASED (or leave claim to its default), or run where JTA is present");
        }
        if (claim == ClaimMode.DEFAULT) {
            claim = runtime.atomicClaims(engine, false) ? ClaimMode.ATOMIC : ClaimMode.LEASED;
        }
        return engine.flow(claim);
    }

    private Policy policy(GlobalSettings global) {
        OnConcurrent onConcurrent = options.onConcurrent() == OnConcurrent.DEFAULT ? global.onConcurrent() : options.onConcurrent();
        return new Policy(options.ttl() == null ? global.ttl() : options.ttl(), options.lease() == null ? global.lease() : options.lease(),
                onConcurrent == OnConcurrent.WAIT, options.waitTimeout() == null ? global.waitTimeout() : options.waitTimeout(),
                global.claimLockTimeout());
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
