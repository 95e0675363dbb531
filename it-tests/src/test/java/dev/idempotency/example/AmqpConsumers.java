package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * An in-server AMQP 1.0 consumer (MicroProfile Reactive Messaging {@code @Incoming} on SmallRye's {@code smallrye-amqp}
 * connector), keyed by default: the message's {@code Idempotency-Derived-Key} application property where it has one,
 * else its message-id. Each run writes a payment whose reference is the key, in the method's transaction, and is
 * counted by {@link ConsumerRuns} (owner {@code amqp}). A message's body is {@code <key>|<amount>}.
 */
@ApplicationScoped
public class AmqpConsumers {

    @PersistenceContext
    EntityManager em;

    @Incoming("it-amqp")
    @Idempotent
    @Transactional
    public CompletionStage<Void> ledger(Message<byte[]> message) {
        String[] parts = new String(message.getPayload(), StandardCharsets.UTF_8).split("\\|");
        em.persist(new Payment(UUID.randomUUID().toString(), Long.parseLong(parts[1]), "EUR", parts[0], "PAID", "amqp"));
        ConsumerRuns.runs("amqp", parts[0]).incrementAndGet();
        return message.ack();
    }
}
