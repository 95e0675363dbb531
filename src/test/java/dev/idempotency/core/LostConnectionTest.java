package dev.idempotency.core;

import org.junit.jupiter.api.Test;

import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLTransientConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which commit failures are the database's connection lost (answered as the store's failure: the retry finds out
 * whether the commit took place), and which stay the caller's. The whole path, with a primary killed mid-commit, is
 * shown by the failover test.
 */
class LostConnectionTest {

    @Test
    void aConnectionFailureReportedAsSuppressedByTheTransactionManagerIsFound() {
        // Narayana reports its resource's failure as suppressed by the RollbackException, not as its cause
        Exception rollback = new Exception("ARJUNA016053: Could not commit transaction.");
        Exception xa = new Exception("Error trying to transactionCommit local transaction",
                new SQLException("An I/O error occurred while sending to the backend.", "08006", new SocketException("Connection reset")));
        rollback.addSuppressed(xa);
        assertThat(LostConnection.in(rollback)).isTrue();
    }

    @Test
    void eachWayADriverSaysItLostTheServerIsFound() {
        assertThat(LostConnection.in(new RuntimeException(new SQLException("terminating connection due to administrator command", "57P01")))).isTrue();
        assertThat(LostConnection.in(new RuntimeException(new SQLTransientConnectionException("no connection within 10 s")))).isTrue();
        assertThat(LostConnection.in(new RuntimeException(new SocketException("Broken pipe")))).isTrue();
        SQLException chained = new SQLException("batch failed", "HY000");
        chained.setNextException(new SQLException("connection closed", "08003"));
        assertThat(LostConnection.in(chained)).isTrue();
    }

    @Test
    void aFailureOfTheWorkOrOfItsDataIsNotALostConnection() {
        assertThat(LostConnection.in(new RuntimeException(new SQLIntegrityConstraintViolationException("duplicate", "23505")))).isFalse();
        assertThat(LostConnection.in(new RuntimeException(new SQLException("could not serialize access", "40001")))).isFalse();
        assertThat(LostConnection.in(new IllegalStateException("the transaction timed out"))).isFalse();
        Exception loop = new Exception("a cause that is itself");
        Exception other = new Exception("its cause", loop);
        loop.addSuppressed(other); // a cycle: the walk ends
        assertThat(LostConnection.in(loop)).isFalse();
    }

    @Test
    void theStoresFailureSaysTheCommitMayHaveTakenPlaceAndKeepsTheCause() {
        SQLException cause = new SQLException("An I/O error occurred while sending to the backend.", "08006");
        var failure = LostConnection.atCommit(new dev.idempotency.spi.ScopedKey("payments", "anonymous", "k-1"), cause);
        assertThat(failure.getMessage()).contains("k-1").contains("may or may not have taken place").contains("a retry replays");
        assertThat(failure.getCause()).isSameAs(cause);
    }

    @Test
    void aCommitThatLostItsConnectionAfterTheWorkRanIsTheStoresFailureAndAfterAReplayTheReplayStands() {
        dev.idempotency.spi.ScopedKey key = new dev.idempotency.spi.ScopedKey("payments", "anonymous", "k-2");
        Exception lost = new Exception("ARJUNA016053: Could not commit transaction.");
        lost.addSuppressed(new SQLException("An I/O error occurred while sending to the backend.", "08006"));
        java.util.List<RuntimeException> counted = new java.util.ArrayList<>();
        EngineObserver observer = new EngineObserver() {
            @Override
            public void storeError(String namespace, RuntimeException error) {
                counted.add(error);
            }
        };
        // The work ran: whether its commit took place is unknown
        AtomicClaimLoop.Step<String> ran = new AtomicClaimLoop.Step.Done<>("receipt");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LostConnection.afterCommit(key, lost, ran, observer))
                .isInstanceOf(dev.idempotency.IdempotencyStoreException.class).hasMessageContaining("k-2").hasCause(lost);
        assertThat(counted).hasSize(1);
        // The work did not run (another call holds the key): its transaction wrote nothing, the answer in hand stands
        AtomicClaimLoop.Step<String> blocked = new AtomicClaimLoop.Step.Blocked<>(false, java.time.Duration.ofSeconds(1));
        assertThat(LostConnection.afterCommit(key, lost, blocked, observer)).isSameAs(blocked);
        // The work threw, or the commit failed for another reason: the caller's failure, as it was
        assertThat(LostConnection.afterCommit(key, lost, null, observer)).isNull();
        assertThat(LostConnection.afterCommit(key, new Exception("the transaction timed out"), ran, observer)).isNull();
        assertThat(counted).hasSize(1);
    }
}
