package dev.idempotency.cdi;

import dev.idempotency.IdempotencyException;
import dev.idempotency.core.Fingerprint;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import org.eclipse.microprofile.reactive.messaging.Message;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The record an {@code @Incoming} method (MicroProfile Reactive Messaging) receives: its key, its fingerprint, and an
 * acknowledgement that waits for the method's transaction. Loaded only for such methods, so that no Reactive Messaging
 * class is needed elsewhere; Kafka's types are read by reflection, so that the library needs no Kafka client.
 *
 * <p>The record is found, in this order: the payload itself when it is Kafka's {@code ConsumerRecord}; SmallRye's
 * {@code IncomingKafkaRecordMetadata} among the message's metadata (WildFly, Quarkus); {@code message.unwrap(ConsumerRecord.class)}
 * (Open Liberty's connector).
 */
final class ReactiveMessages {

    private static final String CONSUMER_RECORD = "org.apache.kafka.clients.consumer.ConsumerRecord";

    private ReactiveMessages() {
    }

    /**
     * The key of a record: the value of its header {@code header} (UTF-8) when one is named, else its coordinates,
     * {@code topic/partition/offset}; {@code null} when it has no such header, or is no Kafka record.
     */
    static String key(Object argument, String header) {
        Object record = record(argument);
        if (record == null) {
            return null;
        }
        if (header != null) {
            Object headers = call(record, "headers", "getHeaders");
            Object last = headers == null ? null : lastHeader(headers, header);
            Object value = last == null ? null : call(last, "value");
            return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : null;
        }
        return call(record, "topic", "getTopic") + "/" + call(record, "partition", "getPartition") + "/"
                + call(record, "offset", "getOffset");
    }

    /** What the key fails to name, for the message of a missing key. */
    static String missing(Object argument, String header) {
        if (record(argument) == null) {
            return "the message carries no Kafka record (its topic, partition and offset, or headers)";
        }
        return "the record has no header " + header;
    }

    /** SHA-256 over the namespace and the payload (text, bytes, or its JSON). */
    static String fingerprint(String namespace, Object argument, JsonCodec codec) {
        Object payload;
        if (argument instanceof Message<?> m) {
            payload = m.getPayload();
        } else if (isConsumerRecord(argument)) {
            payload = call(argument, "value");
        } else {
            payload = argument;
        }
        Fingerprint f = Fingerprint.start().add(namespace);
        if (payload == null) {
            f.add("null");
        } else if (payload instanceof byte[] bytes) {
            f.add("bytes").add(bytes);
        } else if (payload instanceof CharSequence text) {
            f.add("text").add(text.toString());
        } else {
            f.add("json").add(codec.canonical(payload, payload.getClass()));
        }
        return f.hex();
    }

    /**
     * The message as the method gets it: its acknowledgement, asked for inside a transaction, is done once that
     * transaction commits, and a transaction that rolls back nacks it instead; asked for outside a transaction, it is
     * done once the call returned without failing (a call that fails refuses the record instead).
     *
     * <p>A transaction that rolls back while the call is still in the library's hands refuses nothing: the library
     * settles the record itself (a failure is refused, see {@link #refuse}; a duplicate that lost an optimistic race is
     * acknowledged, its key being done). Once {@code returned} is set, a rollback refuses the record. A nack the method
     * asks for while the call runs is its failure: the call fails with it, and the library refuses the record. A record
     * is settled once: the first acknowledgement or refusal counts, any later one is ignored.
     *
     * @param registry the JTA {@code TransactionSynchronizationRegistry}, or {@code null} where there is none
     * @param returned set by the caller once the call returned normally
     */
    static Message<?> ackingAfterCommit(Object argument, Object registry, Settlement returned) {
        Message<?> message = (Message<?>) argument;
        if (publicMethod(Message.class, "getMetadata") != null) {
            // SmallRye's Message (its API declares metadata): withAck and withNack keep the metadata, the Kafka record's
            // among them. A nack asked for while the call runs is the method's failure: the library refuses the record.
            return message.withAck(() -> returned.asked(message, registry, null))
                    .withNack(failure -> returned.asked(message, registry, failure));
        }
        return new AckingAfterCommit<>(message, registry, returned);
    }

    /**
     * The call's work is about to run: the transaction it runs in, if any, is the one every acknowledgement the method
     * asks for waits for.
     */
    static void enlist(Object registry, Settlement call) {
        if (registry != null) {
            AfterCommit.enlist(registry, call);
        }
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
     * outside one.
     */
    static CompletionStage<Void> settle(Object argument, Object registry, Throwable failure, Settlement call) {
        Message<?> message = (Message<?>) argument;
        if (registry == null) {
            return call.once(message, failure);
        }
        return AfterCommit.settle(message, registry, failure, call);
    }

    /**
     * Where a call's record stands between the method and the library, one state for all threads: the attempt that runs,
     * the transaction its work runs in and how that ended, whether the call returned, the first acknowledgement or
     * refusal the method asked for, and whether the record was answered. The record is answered once: when the
     * transaction committed (an acknowledgement) or rolled back after the call returned (a refusal), when the call
     * returned if there is no transaction, at once for a refusal asked for after the return. A transaction that rolls
     * back before the call returned leaves the record to the library; a refusal asked for while the call runs is the
     * call's failure.
     */
    static final class Settlement {
        private final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();
        // guarded by this
        private int attempt;
        private boolean returned;
        private boolean rolledBack;
        private Throwable nacked;
        private Message<?> nackedMessage;
        private Object transaction;
        private Integer ended;
        private Message<?> requested;
        private Throwable requestedFailure;

        /**
         * Acknowledges the record (or nacks it, with {@code failure}) unless it was settled already: a record is answered
         * once, by the first acknowledgement or refusal.
         */
        CompletionStage<Void> once(Message<?> message, Throwable failure) {
            if (!settled.compareAndSet(false, true)) {
                return CompletableFuture.completedFuture(null);
            }
            return failure == null ? message.ack() : message.nack(failure);
        }

        /**
         * The method runs (again): what an earlier run of the same call asked for is gone with that run's transaction
         * (a claim that runs the work again after its first transaction rolled back, as an optimistic one may).
         */
        synchronized void attempt() {
            attempt++;
            rolledBack = false;
            nacked = null;
            nackedMessage = null;
            transaction = null;
            ended = null;
            requested = null;
            requestedFailure = null;
        }

        /** The call's work runs in this transaction; returns the attempt its end is to be reported for. */
        synchronized int transactionBegun(Object key) {
            transaction = key;
            return attempt;
        }

        /** The transaction of an attempt ended with {@code status} (a jakarta.transaction.Status). */
        void transactionEnded(int ofAttempt, int status) {
            Runnable answer;
            synchronized (this) {
                if (ofAttempt != attempt) {
                    return; // an earlier attempt's
                }
                ended = status;
                answer = decide();
            }
            answer.run();
        }

        /** The call returned normally: from now on a rollback refuses the record. */
        void returned() {
            Runnable answer;
            synchronized (this) {
                returned = true;
                answer = decide();
            }
            answer.run();
        }

        synchronized boolean hasReturned() {
            return returned;
        }

        /**
         * An acknowledgement (or, with {@code failure}, a refusal) asked for by the method, on whichever thread. Asked
         * for inside another transaction than the call's (a nested one), it waits for that transaction instead.
         */
        CompletionStage<Void> asked(Message<?> message, Object registry, Throwable failure) {
            Object current = registry == null ? null : AfterCommit.transactionKey(registry);
            Runnable answer;
            synchronized (this) {
                if (current != null && !current.equals(transaction)) {
                    answer = null;
                } else if (failure != null && !returned) {
                    if (nacked == null) {
                        nacked = failure; // the call's failure: the library refuses the record
                        nackedMessage = message;
                    }
                    answer = decide();
                } else {
                    if (requested == null) {
                        requested = message; // the first one counts
                        requestedFailure = failure;
                    }
                    answer = decide();
                }
            }
            if (answer == null) {
                return AfterCommit.settle(message, registry, failure, this);
            }
            answer.run();
            return CompletableFuture.completedFuture(null);
        }

        /** What to do now, if anything; the request it answers is consumed. */
        private Runnable decide() {
            if (returned && nackedMessage != null) {
                // refused while the call ran, too late to fail it: the refusal counts
                Message<?> m = nackedMessage;
                Throwable f = nacked;
                nackedMessage = null;
                requested = null;
                return () -> once(m, f);
            }
            if (requested == null) {
                return () -> { };
            }
            Message<?> m = requested;
            Throwable f = requestedFailure;
            if (f == null && transaction != null && ended == null) {
                return () -> { }; // waits for the transaction
            }
            if (f == null && transaction == null && !returned) {
                return () -> { }; // no transaction: waits for the call to return
            }
            requested = null;
            if (f != null) {
                return () -> once(m, f);
            }
            if (transaction == null || ended == Status.STATUS_COMMITTED) {
                return () -> once(m, null);
            }
            if (!returned) {
                rolledBack = true; // rolled back inside the call: the library settles the record itself
                return () -> { };
            }
            return () -> once(m, ReactiveMessages.rolledBack());
        }

        /** Whether the method acknowledged the record in a transaction that then rolled back, before the call returned. */
        synchronized boolean rolledBack() {
            return rolledBack;
        }

        synchronized void rollBack() {
            rolledBack = true;
        }

        /** The reason the method refused its record with, while the call ran; {@code null} if it did not. */
        synchronized Throwable nacked() {
            return nacked;
        }
    }

    /** The failure of a stage that already completed exceptionally; {@code null} for anything else (a stage still running too). */
    static Throwable failure(Object result) {
        if (!(result instanceof CompletionStage<?> stage)) {
            return null;
        }
        CompletableFuture<?> f;
        try {
            f = stage.toCompletableFuture();
        } catch (UnsupportedOperationException e) {
            return null; // a stage that cannot tell: taken as running
        }
        if (!f.isCompletedExceptionally()) {
            return null;
        }
        try {
            f.join();
            return null;
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        }
    }

    /**
     * Refuses a record whose call failed: the transaction it ran in (the caller's, still open) is marked for rollback,
     * and the record nacked with the failure.
     */
    static CompletionStage<Void> refuse(Object argument, Object registry, Throwable failure, Settlement call) {
        Message<?> message = (Message<?>) argument;
        if (registry != null) {
            AfterCommit.markRollbackOnly(registry);
        }
        return call.once(message, failure);
    }

    /**
     * What a consumer of the Message returns, handed back: a stage that fails after the call returned refuses the
     * record with its failure (the work done before the return stands), and completes, so that the channel goes on.
     */
    static Object refusingLateFailures(Object result, Object argument, Settlement call) {
        if (!(result instanceof CompletionStage<?> stage)) {
            return result;
        }
        Message<?> message = (Message<?>) argument;
        return stage.handle((v, e) -> e).thenCompose(e -> e == null ? CompletableFuture.<Void>completedFuture(null)
                : call.asked(message, null, e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e)
                        .exceptionally(nackFailed -> null));
    }

    /** Why a record acknowledged in a transaction that rolled back is refused. */
    static IdempotencyException rolledBack() {
        return new IdempotencyException("The transaction that handled the record rolled back after the record was"
                + " acknowledged in it; it is refused instead, so that it comes again");
    }

    /** The JTA part, apart: loaded only where there is a transaction manager. */
    private static final class AfterCommit {

        private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(ReactiveMessages.class.getName());

        /** Marks the current transaction, if one is active, for rollback. */
        static void markRollbackOnly(Object registryObject) {
            TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
            if (registry.getTransactionKey() != null && registry.getTransactionStatus() == Status.STATUS_ACTIVE) {
                registry.setRollbackOnly();
            }
        }

        static Object transactionKey(Object registryObject) {
            return ((TransactionSynchronizationRegistry) registryObject).getTransactionKey();
        }

        static void enlist(Object registryObject, Settlement call) {
            TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
            Object key = registry.getTransactionKey();
            if (key == null) {
                return;
            }
            int attempt = call.transactionBegun(key);
            if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
                call.transactionEnded(attempt, Status.STATUS_ROLLEDBACK); // marked for rollback already: it cannot commit
                return;
            }
            registry.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                }

                @Override
                public void afterCompletion(int status) {
                    try {
                        call.transactionEnded(attempt, status);
                    } catch (RuntimeException e) {
                        LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
                    }
                }
            });
        }

        /**
         * Settles the record once the current transaction ends (at once outside one); the stage returned is complete at
         * once: a transaction interceptor that ends the transaction only once the method's stage completes would
         * otherwise wait for an acknowledgement that waits for it.
         */
        static CompletionStage<Void> settle(Message<?> message, Object registryObject, Throwable failure,
                                            Settlement returned) {
            TransactionSynchronizationRegistry registry = (TransactionSynchronizationRegistry) registryObject;
            if (registry.getTransactionKey() == null) {
                return returned.once(message, failure);
            }
            if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
                // Marked for rollback (or ending): it cannot commit, and takes no synchronization.
                if (failure == null && !returned.hasReturned()) {
                    returned.rollBack();
                    return CompletableFuture.completedFuture(null);
                }
                return returned.once(message, failure == null ? rolledBack() : failure);
            }
            registry.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                }

                @Override
                public void afterCompletion(int status) {
                    if (failure == null && status != Status.STATUS_COMMITTED && !returned.hasReturned()) {
                        returned.rollBack(); // rolled back inside the call: the library settles the record itself
                        return;
                    }
                    try {
                        CompletionStage<Void> settled = returned.once(message, failure != null ? failure
                                : status == Status.STATUS_COMMITTED ? null : rolledBack());
                        settled.whenComplete((v, e) -> {
                            if (e != null) {
                                LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
                            }
                        });
                    } catch (RuntimeException e) {
                        LOG.log(java.util.logging.Level.WARNING, "The connector failed to settle a record after its transaction ended", e);
                    }
                }
            });
            return CompletableFuture.completedFuture(null);
        }
    }

    /** The Kafka record (a {@code ConsumerRecord}, or SmallRye's metadata of one) behind the argument, or {@code null}. */
    private static Object record(Object argument) {
        if (isConsumerRecord(argument)) {
            return argument;
        }
        if (!(argument instanceof Message<?> message)) {
            return null;
        }
        Object metadata = call(message, "getMetadata");
        if (metadata instanceof Iterable<?> all) {
            for (Object m : all) {
                if (m != null && m.getClass().getName().startsWith("io.smallrye.reactive.messaging.kafka")
                        && publicMethod(m.getClass(), "getOffset") != null && publicMethod(m.getClass(), "getHeaders") != null) {
                    return m;
                }
            }
        }
        try {
            Class<?> type = Class.forName(CONSUMER_RECORD, false, message.getClass().getClassLoader());
            return message.unwrap(type);
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            return null; // not a Kafka message, or a connector that cannot unwrap its record
        }
    }

    private static boolean isConsumerRecord(Object o) {
        for (Class<?> c = o == null ? null : o.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals(CONSUMER_RECORD)) {
                return true;
            }
        }
        return false;
    }

    /** The value of the first of the named no-argument methods the object has, or {@code null}. */
    private static Object call(Object target, String... names) {
        try {
            for (String n : names) {
                Method m = publicMethod(target.getClass(), n);
                if (m != null) {
                    return m.invoke(target);
                }
            }
            return null;
        } catch (ReflectiveOperationException e) {
            throw new IdempotencyException("Could not read the record's " + names[0], e);
        }
    }

    /** Kafka's {@code Headers.lastHeader(name)}. */
    private static Object lastHeader(Object headers, String name) {
        try {
            Method m = publicMethod(headers.getClass(), "lastHeader", String.class);
            return m == null ? null : m.invoke(headers, name);
        } catch (ReflectiveOperationException e) {
            throw new IdempotencyException("Could not read the record's header " + name, e);
        }
    }

    /** The method as a public type declares it (an implementation class may be private), or {@code null}. */
    private static Method publicMethod(Class<?> type, String name, Class<?>... parameters) {
        if (type == null) {
            return null;
        }
        if (Modifier.isPublic(type.getModifiers())) {
            try {
                return type.getMethod(name, parameters);
            } catch (NoSuchMethodException e) {
                // not here; an interface may still declare it
            }
        }
        for (Class<?> i : type.getInterfaces()) {
            Method m = publicMethod(i, name, parameters);
            if (m != null) {
                return m;
            }
        }
        return publicMethod(type.getSuperclass(), name, parameters);
    }
}
