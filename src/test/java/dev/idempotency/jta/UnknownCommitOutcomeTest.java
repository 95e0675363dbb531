package dev.idempotency.jta;

import dev.idempotency.ClaimMode;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.testing.TextCall;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.transaction.xa.XAException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A commit of the library's own transaction that fails where it may have taken place (Narayana: a resource's commit
 * failing with {@code XAER_RMFAIL}, reported to synchronizations as committed, then {@code HeuristicMixedException}).
 * Whether it committed or not, the key is never run twice for it, and nothing is answered from what no one knows (the
 * steps of atomic and optimistic claims only let the key go and wake its waiters, which read the store: see
 * {@link JtaTransactionBridgeTest} and the failover test in WildFly).
 */
class UnknownCommitOutcomeTest {

    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO, Duration.ofSeconds(1));

    @AfterEach
    void noTransactionLeft() throws Exception {
        var tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        if (tm.getStatus() != jakarta.transaction.Status.STATUS_NO_TRANSACTION) {
            tm.rollback();
        }
    }

    static String answer(AtomicOutcome<String> outcome) {
        return outcome instanceof AtomicOutcome.Ran<String> ran ? ran.value()
                : new String(((AtomicOutcome.Replayed<String>) outcome).record().response(), StandardCharsets.UTF_8);
    }

    /**
     * A leased call in the library's own transaction, on a store whose completion is not the transaction's (it is
     * written at once, and a release undoes it whatever its status): an unknown outcome must not release the key, or
     * the retry would run work that may have committed. The key keeps its answer.
     */
    @Test
    void aLeasedCallWhoseCommitsOutcomeIsUnknownIsNotReleased() throws Exception {
        var tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        var tsr = new com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple();
        JtaTransactionBridge bridge = new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm));
        IdempotencyEngine engine = new IdempotencyEngine(new InMemoryIdempotencyStore(), Clock.systemUTC(), "node", bridge,
                new LocalCompletionSignals(), Executors.newCachedThreadPool(), Duration.ofSeconds(5), RecordCache.NONE);
        ScopedKey key = new ScopedKey("payments", "anonymous", "unknown-leased");
        AtomicInteger runs = new AtomicInteger();
        TextCall work = TextCall.of(() -> "answer-" + runs.incrementAndGet());

        assertThatThrownBy(() -> bridge.required(() -> {
            tm.getTransaction().enlistResource(new JtaTransactionBridgeTest.Resource(XAException.XAER_RMFAIL));
            return engine.flow(ClaimMode.LEASED).run(key, "fp", null, POLICY, work);
        })).hasStackTraceContaining("HeuristicMixedException");

        assertThat(answer(engine.flow(ClaimMode.LEASED).run(key, "fp", null, POLICY, work)))
                .as("the key keeps the answer it was given").isEqualTo("answer-1");
        assertThat(runs).as("run once").hasValue(1);
    }
}
