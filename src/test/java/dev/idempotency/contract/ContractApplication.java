package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Idempotent;
import dev.idempotency.OnConcurrent;
import dev.idempotency.spi.IdempotencyStore;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.infinispan.Cache;

import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

/**
 * What each node of a world deploys when the schedule reaches the engine through CDI (the {@code @Idempotent}
 * interceptor, the functional API, the manager): an application's beans, the library's extension picking them up as in
 * a server. The store, the clock and (for a shared cache) the cache are the world's, handed to every node as an
 * application hands its own; the work a call runs is the one the world set on the calling thread.
 */
public final class ContractApplication {

    /** The namespace of the methods and of the functional calls. */
    static final String NAMESPACE = "payments";

    private ContractApplication() {
    }

    /** The work of the call the world makes on this thread. */
    static final ThreadLocal<Callable<String>> WORK = new ThreadLocal<>();
    static volatile IdempotencyStore store;
    static volatile Clock clock;
    static volatile Cache<String, byte[]> sharedCache;

    /** A failure the methods keep as their answer ({@code keepOn}); rebuilt from its message on a replay. */
    public static final class Kept extends RuntimeException {
        public Kept(String message) {
            super(message, null, false, false);
        }
    }

    /** A failure that frees the key. */
    public static final class Released extends RuntimeException {
        public Released(String message) {
            super(message, null, false, false);
        }
    }

    /** The world's store and clock, as an application's own beans. */
    @ApplicationScoped
    public static class Resources {
        @Produces
        IdempotencyStore store() {
            return store;
        }

        @Produces
        @ForIdempotency
        Clock clock() {
            return clock;
        }
    }

    /** The cache both nodes share (a replicated cache's view), as an application's own {@code @ForIdempotency} cache. */
    @ApplicationScoped
    public static class SharedCache {
        @Produces
        @ForIdempotency
        Cache<String, byte[]> cache() {
            return sharedCache;
        }
    }

    /** The interceptor's door: one method per claim mode and duplicate policy, each running the thread's work. */
    @ApplicationScoped
    public static class Payments {
        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.REJECT, keepOn = Kept.class,
                ttl = "PT1H", lease = "PT30S")
        public String atomicReject(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }

        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public String atomicWait(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }

        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.REJECT, keepOn = Kept.class,
                ttl = "PT1H", lease = "PT30S")
        public String optimisticReject(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }

        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public String optimisticWait(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }

        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.REJECT, keepOn = Kept.class,
                ttl = "PT1H", lease = "PT30S")
        public String leasedReject(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }

        @Idempotent(namespace = NAMESPACE, claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public String leasedWait(@IdempotencyKey String key, String request) throws Exception {
            return WORK.get().call();
        }
    }

    /** The record the consumer on this thread was handed, for a work that acknowledges it in a bean's transaction. */
    static final ThreadLocal<Message<?>> RECORD = new ThreadLocal<>();
    /** Set by such a work: the record's acknowledgement was asked for in the bean's transaction, not to be asked again. */
    static final ThreadLocal<Boolean> ACKNOWLEDGED_IN_A_BEAN = new ThreadLocal<>();
    /** This thread's node's bean with a transaction of its own. */
    static final ThreadLocal<Ledger> LEDGER = new ThreadLocal<>();

    /** A bean the consumer's work calls, whose step runs in a transaction of its own ({@code REQUIRES_NEW}). */
    @ApplicationScoped
    public static class Ledger {
        @jakarta.transaction.Transactional(jakarta.transaction.Transactional.TxType.REQUIRES_NEW)
        public void inItsOwnTransaction(Runnable step) {
            step.run();
        }
    }

    /** Runs the thread's work for the record, then acknowledges it unless the work had a bean do it. */
    static CompletionStage<Void> handle(Message<String> record) throws Exception {
        RECORD.set(record);
        try {
            WORK.get().call();
            return Boolean.TRUE.equals(ACKNOWLEDGED_IN_A_BEAN.get()) ? java.util.concurrent.CompletableFuture.completedFuture(null)
                    : record.ack();
        } finally {
            RECORD.remove();
            ACKNOWLEDGED_IN_A_BEAN.remove();
        }
    }

    /** The header that carries a record's key. */
    static final String HEADER = "Idempotency-Key";

    /**
     * The consumer's door: an {@code @Incoming} method per claim mode and duplicate policy, taking the record as
     * SmallRye's Kafka connector hands it over (a {@code Message} with the record's metadata, the key in a header), running
     * the thread's work and acknowledging the record.
     */
    @ApplicationScoped
    public static class Consumers {
        @Incoming("contract-atomic-reject")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.REJECT,
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> atomicReject(Message<String> record) throws Exception {
            return handle(record);
        }

        @Incoming("contract-atomic-wait")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.ATOMIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> atomicWait(Message<String> record) throws Exception {
            return handle(record);
        }

        @Incoming("contract-optimistic-reject")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.REJECT,
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> optimisticReject(Message<String> record) throws Exception {
            return handle(record);
        }

        @Incoming("contract-optimistic-wait")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.OPTIMISTIC, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> optimisticWait(Message<String> record) throws Exception {
            return handle(record);
        }

        @Incoming("contract-leased-reject")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.REJECT,
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> leasedReject(Message<String> record) throws Exception {
            return handle(record);
        }

        @Incoming("contract-leased-wait")
        @Idempotent(namespace = NAMESPACE, messageProperty = HEADER, claim = ClaimMode.LEASED, onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT20S",
                keepOn = Kept.class, ttl = "PT1H", lease = "PT30S")
        public CompletionStage<Void> leasedWait(Message<String> record) throws Exception {
            return handle(record);
        }
    }
}
