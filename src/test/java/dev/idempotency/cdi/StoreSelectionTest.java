package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.TestDatabase;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import dev.idempotency.runtime.IdempotencyRuntime;

/** The store configuration: the application's store wins; memory; a JPA unit in Java SE. */
class StoreSelectionTest {

    @ApplicationScoped
    public static class Greeter {
        final AtomicInteger executions = new AtomicInteger();

        @Idempotent
        public String greet(@IdempotencyKey String key, String name) {
            executions.incrementAndGet();
            return "hello " + name;
        }
    }

    /** An application's own store: here, one that counts claims. */
    @ApplicationScoped
    public static class CountingStore implements IdempotencyStore {
        final InMemoryIdempotencyStore delegate = new InMemoryIdempotencyStore();
        final AtomicInteger claims = new AtomicInteger();

        @Override
        public Claim claim(ClaimRequest request) {
            claims.incrementAndGet();
            return delegate.claim(request);
        }

        @Override
        public void complete(Ticket ticket, Completion completion) {
            delegate.complete(ticket, completion);
        }

        @Override
        public boolean release(Ticket ticket, Instant now) {
            return delegate.release(ticket, now);
        }

        @Override
        public Optional<IdempotencyRecord> find(ScopedKey scopedKey) {
            return delegate.find(scopedKey);
        }

        @Override
        public int purgeExpired(Instant now, int max) {
            return delegate.purgeExpired(now, max);
        }

        public int claims() {
            return claims.get();
        }
    }

    @Test
    void theApplicationsOwnStoreWins() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of(), Greeter.class, CountingStore.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            g.greet("k", "ada");
            g.greet("k", "ada");
            assertThat(c.select(CountingStore.class).get().claims()).as("the duplicate is answered by the cache in front").isEqualTo(1);
            assertThat(c.select(IdempotencyRuntime.class).get().engine().store()).isInstanceOf(CountingStore.class);
            // Management is an optional capability (StoreManagement): without it, a clear refusal naming the store.
            dev.idempotency.IdempotencyManager manager = c.select(dev.idempotency.IdempotencyManager.class).get();
            manager.store(dev.idempotency.RequestKey.of("r"), "stored");
            assertThat(new String(manager.retrieve(dev.idempotency.RequestKey.of("r")), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("stored");
            org.assertj.core.api.Assertions.assertThatThrownBy(manager::clear).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining(CountingStore.class.getName()).hasMessageContaining("StoreManagement");
        }
    }

    @Test
    void aPersistenceUnitOfTheApplicationInJavaSe() {
        TestDatabase.H2.reset();
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.persistence-unit", "idempotency-se"), Greeter.class).initialize()) {
            Greeter g = c.select(Greeter.class).get();
            assertThat(g.greet("k", "ada")).isEqualTo("hello ada");
            assertThat(g.greet("k", "ada")).isEqualTo("hello ada");
            assertThat(c.select(IdempotencyRuntime.class).get().engine().store()).isInstanceOf(JpaIdempotencyStore.class);
            assertThat(TestDatabase.H2.count("select count(*) from idempotency_record where status = 'COMPLETED'")).isEqualTo(1);
        }
    }

    @Test
    void noDatabaseIsADeploymentFailureThatSaysWhatToSet() {
        try (WeldContainer ignored = IdempotencyWeld.weld(Map.of(), Greeter.class).initialize()) {
            fail("the deployment should have failed");
        } catch (RuntimeException e) {
            StringWriter text = new StringWriter();
            e.printStackTrace(new PrintWriter(text));
            assertThat(text.toString())
                    .contains("The JPA store has no database")
                    .contains("java:comp/DefaultDataSource")
                    .contains("idempotency.persistence-unit");
        }
    }
}
