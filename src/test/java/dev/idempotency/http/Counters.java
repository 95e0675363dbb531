package dev.idempotency.http;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/** What the test resources did, counted; reset before each test. */
final class Counters {

    static final AtomicInteger executions = new AtomicInteger();
    static final AtomicInteger arrivals = new AtomicInteger();
    static volatile CountDownLatch slow = new CountDownLatch(1);

    private Counters() {
    }

    static void reset() {
        executions.set(0);
        arrivals.set(0);
        slow = new CountDownLatch(1);
    }
}
