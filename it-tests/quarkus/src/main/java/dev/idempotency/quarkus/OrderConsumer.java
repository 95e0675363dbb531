package dev.idempotency.quarkus;

import dev.idempotency.Idempotent;

import io.smallrye.reactive.messaging.annotations.Blocking;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.concurrent.CompletionStage;

/**
 * A RabbitMQ consumer (Quarkus's {@code quarkus-messaging-rabbitmq}): each message charges its key once, keyed by
 * default (the message's {@code Idempotency-Derived-Key} header where it has one, else its message-id). A message's
 * body is {@code <key>|<amount>}. Blocking, as JDBC work on Quarkus must be (off the event loop).
 */
@ApplicationScoped
public class OrderConsumer {

    @Inject
    Ledger ledger;

    @Incoming("orders")
    @Blocking
    @Idempotent
    @Transactional
    public CompletionStage<Void> consume(Message<String> message) {
        String[] parts = message.getPayload().split("\\|");
        ledger.charge(parts[0], Long.parseLong(parts[1]));
        return message.ack();
    }
}
