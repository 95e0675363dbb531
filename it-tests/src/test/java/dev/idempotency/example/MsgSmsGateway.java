package dev.idempotency.example;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A counting stand-in for an external SMS API. The side effect is not transactional, so its record commits on
 * its own (NOT_SUPPORTED): a later failure of the message's transaction does not release it.
 */
@ApplicationScoped
public class MsgSmsGateway {

    static final AtomicInteger SENT = new AtomicInteger();

    @Transactional(Transactional.TxType.NOT_SUPPORTED)
    @Idempotent(namespace = "sms-gateway")
    public void send(@IdempotencyKey String messageId, String text) {
        SENT.incrementAndGet();
    }
}
