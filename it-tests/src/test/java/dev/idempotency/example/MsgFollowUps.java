package dev.idempotency.example;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicInteger;

/** Publishes the follow-up event; fails as often as the test asks (a broker time-out). */
@ApplicationScoped
public class MsgFollowUps {

    static final AtomicInteger PUBLISHED = new AtomicInteger();
    static final AtomicInteger FAILURES_LEFT = new AtomicInteger();

    public void publish(String messageId) {
        if (FAILURES_LEFT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("publishing the follow-up event timed out");
        }
        PUBLISHED.incrementAndGet();
    }
}
