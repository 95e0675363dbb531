package dev.idempotency.cdi;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.IdempotencyOptions;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Without a transaction manager: a claim that needs one is refused before the work runs; the default is leased. */
class FunctionalApiWithoutTransactionsTest {

    @Test
    void atomicAndOptimisticAreRefusedBeforeTheWorkRunsAndTheDefaultIsLeased() throws Exception {
        try (WeldContainer container = dev.idempotency.testing.IdempotencyWeld.weld(Map.of("idempotency.store", "memory")).initialize()) {
            Idempotency idempotency = container.select(Idempotency.class).get();
            AtomicInteger runs = new AtomicInteger();
            for (ClaimMode claim : new ClaimMode[] {ClaimMode.ATOMIC, ClaimMode.OPTIMISTIC}) {
                assertThatThrownBy(() -> idempotency.with(IdempotencyOptions.builder().claim(claim).build())
                        .call("jobs", "k", null, String.class, () -> "ran " + runs.incrementAndGet()))
                        .isInstanceOf(IdempotencyConfigurationException.class)
                        .hasMessageContaining("asks for claim " + claim + ", but the store")
                        .hasMessageContaining("use claim = ClaimMode.LEASED");
            }
            assertThat(runs).hasValue(0);
            assertThat(idempotency.call("jobs", "k", null, String.class, () -> "ran " + runs.incrementAndGet())).isEqualTo("ran 1");
            assertThat(idempotency.call("jobs", "k", null, String.class, () -> "ran " + runs.incrementAndGet())).isEqualTo("ran 1");
            assertThat(runs).hasValue(1);
        }
    }
}
