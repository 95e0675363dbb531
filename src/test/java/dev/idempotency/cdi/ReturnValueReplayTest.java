package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyMissingException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Keys from parameters, values stored with JSON-B and replayed equal, void de-duplicated, a CompletionStage kept when it completes. */
@EnableWeld
class ReturnValueReplayTest {

    @WeldSetup
    WeldInitiator weld = IdempotencyWeld.memory(Map.of(), Receipts.class, Notifier.class, Optional.class);

    @Inject
    Receipts receipts;
    @Inject
    Notifier notifier;
    @Inject
    Optional optional;

    public record Line(String sku, int quantity, BigDecimal price) {
    }

    public record Receipt(UUID id, String customer, List<Line> lines, Instant issuedAt) {
    }

    @ApplicationScoped
    public static class Receipts {
        final AtomicInteger executions = new AtomicInteger();

        @Idempotent
        public List<Receipt> issue(@IdempotencyKey String key, String customer, List<Line> lines) {
            executions.incrementAndGet();
            return List.of(new Receipt(UUID.randomUUID(), customer, lines, Instant.now()),
                    new Receipt(UUID.randomUUID(), customer, List.of(), Instant.now()));
        }

        @Idempotent
        public CompletionStage<Receipt> issueLater(@IdempotencyKey UUID key, String customer) {
            executions.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> new Receipt(UUID.randomUUID(), customer, List.of(), Instant.now()));
        }

        @Idempotent
        public int count(@IdempotencyKey long key) {
            return executions.incrementAndGet();
        }

        public int executions() {
            return executions.get();
        }
    }

    @ApplicationScoped
    public static class Notifier {
        final AtomicInteger sent = new AtomicInteger();

        @Idempotent
        public void send(String text, @IdempotencyKey String key) {
            sent.incrementAndGet();
        }

        public int sent() {
            return sent.get();
        }
    }

    @ApplicationScoped
    public static class Optional {
        final AtomicInteger executions = new AtomicInteger();

        @Idempotent(required = false)
        public String run(@IdempotencyKey String key) {
            return "run " + executions.incrementAndGet();
        }
    }

    static final List<Line> LINES = List.of(new Line("book", 2, new BigDecimal("12.50")), new Line("pen", 1, new BigDecimal("1.99")));

    @Test
    void aGenericReturnValueIsReplayedEqualWithoutRunningAgain() {
        List<Receipt> first = receipts.issue("order-1", "alice", LINES);
        List<Receipt> second = receipts.issue("order-1", "alice", LINES);
        assertThat(second).isEqualTo(first);
        assertThat(second.get(0)).isInstanceOf(Receipt.class);
        assertThat(second.get(0).lines().get(0).price()).isEqualByComparingTo("12.50");
        assertThat(receipts.executions()).isEqualTo(1);
    }

    @Test
    void anotherKeyRunsAgain() {
        receipts.issue("order-1", "alice", LINES);
        receipts.issue("order-2", "alice", LINES);
        assertThat(receipts.executions()).isEqualTo(2);
    }

    @Test
    void theSameKeyWithOtherArgumentsIsMisuseAndDoesNotRun() {
        receipts.issue("order-1", "alice", LINES);
        assertThatThrownBy(() -> receipts.issue("order-1", "bob", LINES))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("order-1")
                .hasMessageNotContaining("bob");
        assertThat(receipts.executions()).isEqualTo(1);
    }

    @Test
    void aVoidMethodIsDeduplicated() {
        notifier.send("hello", "sms-1");
        notifier.send("hello", "sms-1");
        notifier.send("hello", "sms-2");
        assertThat(notifier.sent()).isEqualTo(2);
    }

    @Test
    void primitivesAndNonStringKeysWork() {
        assertThat(receipts.count(42L)).isEqualTo(1);
        assertThat(receipts.count(42L)).isEqualTo(1);
        assertThat(receipts.count(43L)).isEqualTo(2);
    }

    @Test
    void aCompletionStageCompletesTheRecordWhenItCompletes() throws Exception {
        UUID key = UUID.randomUUID();
        Receipt first = receipts.issueLater(key, "alice").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Receipt replay = receipts.issueLater(key, "alice").toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(replay).isEqualTo(first);
        assertThat(receipts.executions()).isEqualTo(1);
    }

    @Test
    void aMissingKeyIsRefusedAndNothingRuns() {
        assertThatThrownBy(() -> receipts.issue(null, "alice", LINES)).isInstanceOf(IdempotencyKeyMissingException.class);
        assertThatThrownBy(() -> receipts.issue("  ", "alice", LINES)).isInstanceOf(IdempotencyKeyMissingException.class);
        assertThat(receipts.executions()).isEqualTo(0);
    }

    @Test
    void aMalformedKeyIsRefusedAndNothingRuns() {
        assertThatThrownBy(() -> receipts.issue("k".repeat(256), "alice", LINES)).isInstanceOf(IdempotencyKeyInvalidException.class);
        assertThatThrownBy(() -> receipts.issue("clé", "alice", LINES)).isInstanceOf(IdempotencyKeyInvalidException.class);
        assertThat(receipts.issue("k".repeat(255), "alice", LINES)).hasSize(2);
        assertThat(receipts.executions()).isEqualTo(1);
    }

    @Test
    void withoutARequiredKeyTheCallRunsUnprotected() {
        assertThat(optional.run(null)).isEqualTo("run 1");
        assertThat(optional.run(null)).isEqualTo("run 2");
        assertThat(optional.run("k")).isEqualTo("run 3");
        assertThat(optional.run("k")).isEqualTo("run 3");
    }
}
