package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.OnConcurrent;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.idempotency.runtime.IdempotencyRuntime;

/** A duplicate while the first call runs is rejected with a retry-after, or waits and replays. */
@EnableWeld
class ConcurrentDuplicatesTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of("idempotency.lease", "PT20S"), Slow.class);

    @Inject
    Slow slow;

    @Inject
    IdempotencyRuntime runtime;

    @ApplicationScoped
    public static class Slow {
        final AtomicInteger executions = new AtomicInteger();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch proceed = new CountDownLatch(1);

        @Idempotent
        public String reject(@IdempotencyKey String key) throws InterruptedException {
            return body();
        }

        @Idempotent(onConcurrent = OnConcurrent.WAIT, waitTimeout = "PT30S")
        public String await(@IdempotencyKey String key) throws InterruptedException {
            return body();
        }

        private String body() throws InterruptedException {
            int n = executions.incrementAndGet();
            entered.countDown();
            assertThat(proceed.await(30, TimeUnit.SECONDS)).isTrue();
            return "done " + n;
        }

        public boolean awaitEntered() throws InterruptedException {
            return entered.await(30, TimeUnit.SECONDS);
        }

        public void letProceed() {
            proceed.countDown();
        }

        public int executions() {
            return executions.get();
        }
    }

    /**
     * Threads of the test's own: a call here blocks until the test lets it go, and the common pool may have a single
     * worker (two cores; since JDK 25 CompletableFuture uses it even then), which the first call would keep.
     */
    final java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newCachedThreadPool();

    @org.junit.jupiter.api.AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    @Test
    void aDuplicateIsRejectedWithRetryAfterWhileTheFirstRuns() throws Exception {
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> call(() -> slow.reject("k")), callers);
        assertThat(slow.awaitEntered()).isTrue();
        assertThatThrownBy(() -> slow.reject("k"))
                .isInstanceOfSatisfying(IdempotencyInProgressException.class, e -> {
                    assertThat(e.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(5));
                    assertThat(e.getMessage()).contains("'k'");
                });
        slow.letProceed();
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("done 1");
        assertThat(slow.reject("k")).isEqualTo("done 1");
        assertThat(slow.executions()).isEqualTo(1);
    }

    @Test
    void aWaitingDuplicateGetsTheFirstResult() throws Exception {
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> call(() -> slow.await("k")), callers);
        assertThat(slow.awaitEntered()).isTrue();
        CompletableFuture<String> second = CompletableFuture.supplyAsync(() -> call(() -> slow.await("k")), callers);
        // Released only once the duplicate is seen waiting: a duplicate that came after the first finished
        // would replay without ever having waited.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (runtime.signals().waiters() == 0) {
            assertThat(System.nanoTime()).as("the duplicate waits").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(second).isNotDone();
        slow.letProceed();
        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo("done 1");
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("done 1");
        assertThat(slow.executions()).isEqualTo(1);
    }

    interface Call {
        String run() throws Exception;
    }

    static String call(Call c) {
        try {
            return c.run();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
