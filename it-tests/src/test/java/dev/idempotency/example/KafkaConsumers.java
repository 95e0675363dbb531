package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * In-server Kafka consumers (MicroProfile Reactive Messaging {@code @Incoming}, each record keyed by its
 * {@code Idempotency-Key} header). Each run writes a payment whose reference is the key, in the method's transaction;
 * its runs are counted in the server JVM's system properties, so that the counts survive a redeployment (the test
 * redeploys to get a new consumer). A record's payload is {@code <key>|<amount>}.
 */
@ApplicationScoped
public class KafkaConsumers {

    /** A refusal the method keeps: its redelivery is answered with it, not run. */
    public static class UnpayableException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public UnpayableException(String message) {
            super(message);
        }
    }

    @PersistenceContext
    EntityManager em;

    /** Every record of the ledger topic writes its payment. */
    @Incoming("it-ledger")
    @Idempotent(messageProperty = "Idempotency-Key")
    @Transactional
    public CompletionStage<Void> ledger(Message<String> message) {
        pay(message.getPayload(), "kafka");
        return message.ack();
    }

    /** The first run of each record throws after its payment was written; the next one completes. */
    @Incoming("it-flaky")
    @Idempotent(messageProperty = "Idempotency-Key")
    @Transactional
    public CompletionStage<Void> flaky(Message<String> message) {
        long run = pay(message.getPayload(), "kafka-flaky");
        if (run == 1) {
            throw new IllegalStateException("the first run of " + message.getPayload() + " fails after its write");
        }
        return message.ack();
    }

    /** Every run throws a refusal the method keeps. */
    @Incoming("it-kept")
    @Idempotent(messageProperty = "Idempotency-Key", keepOn = UnpayableException.class)
    @Transactional
    public CompletionStage<Void> kept(Message<String> message) {
        pay(message.getPayload(), "kafka-kept");
        throw new UnpayableException("the account behind " + message.getPayload() + " is closed");
    }

    /** Writes the payment of a {@code <key>|<amount>} payload; returns the number of this run of the key. */
    long pay(String payload, String owner) {
        String[] parts = payload.split("\\|");
        em.persist(new Payment(UUID.randomUUID().toString(), Long.parseLong(parts[1]), "EUR", parts[0], "PAID", owner));
        return runs(owner, parts[0]).incrementAndGet();
    }

    /** The runs of a key, counted in the server JVM ({@link ConsumerRuns}). */
    static AtomicLong runs(String owner, String key) {
        return ConsumerRuns.runs(owner, key);
    }
}
