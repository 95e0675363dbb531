package dev.idempotency.store;

import dev.idempotency.IdempotencyLeaseLostException;
import dev.idempotency.core.Decision;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.ResourceLocalTransactions;
import dev.idempotency.testing.FakeClock;
import dev.idempotency.testing.TestDatabase;

import jakarta.persistence.EntityManagerFactory;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The JPA store without JTA (Java SE, resource-local transactions) on H2. */
class ResourceLocalJpaStoreTest {

    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);

    final FakeClock clock = new FakeClock();
    EntityManagerFactory emf;
    JpaIdempotencyStore store;

    @BeforeEach
    void start() {
        TestDatabase.H2.reset();
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(TestDatabase.H2.url);
        ds.setUser(TestDatabase.H2.user);
        assertThat(JpaSchema.createIfMissing(ds)).isTrue();
        assertThat(JpaSchema.createIfMissing(ds)).as("second time: exists").isFalse();
        emf = IdempotencyPersistenceUnit.create(ds, false, Map.of());
        store = new JpaIdempotencyStore(new ResourceLocalTransactions(emf), Duration.ofSeconds(5));
    }

    @AfterEach
    void stop() {
        emf.close();
    }

    @Test
    void claimCompleteReplayAndFence() {
        IdempotencyEngine a = IdempotencyEngine.simple(store, clock, "a");
        IdempotencyEngine b = IdempotencyEngine.simple(store, clock, "b");
        ScopedKey key = new ScopedKey("rl", "anonymous", "k");
        Ticket stale = ((Decision.Proceed) a.begin(key, "fp", null, POLICY)).ticket();
        clock.advance(Duration.ofSeconds(31));
        Ticket current = ((Decision.Proceed) b.begin(key, "fp", null, POLICY)).ticket();
        assertThatThrownBy(() -> a.complete(stale, "late".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IdempotencyLeaseLostException.class);
        b.complete(current, "done".getBytes(StandardCharsets.UTF_8));
        Decision replay = a.begin(key, "fp", null, POLICY);
        assertThat(((Decision.Replay) replay).record().response()).isEqualTo("done".getBytes(StandardCharsets.UTF_8));
        assertThat(((Decision.Replay) replay).record().status()).isEqualTo(RecordStatus.COMPLETED);
    }
}
