package dev.idempotency.jta;

import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the engine's steps after a transaction are told, on Narayana. A one-phase commit whose resource lost its
 * connection during the commit (WildFly's non-XA data sources report it as {@code XAER_RMFAIL}) has an unknown outcome:
 * Narayana calls the synchronizations with {@code STATUS_COMMITTED}, then throws {@code HeuristicMixedException}. For a
 * transaction the library commits itself, its steps must hear "not committed" (nothing published from it: the store is
 * read again), and "committed" only once its commit returned.
 */
class JtaTransactionBridgeTest {

    final TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
    final TransactionSynchronizationRegistry tsr = new com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple();
    final JtaTransactionBridge bridge = new JtaTransactionBridge(tsr, new TransactionManagerRequiresNew(tm),
            com.arjuna.ats.jta.UserTransaction.userTransaction());
    final List<Boolean> told = new CopyOnWriteArrayList<>();

    @AfterEach
    void noTransactionLeft() throws Exception {
        if (tm.getStatus() != Status.STATUS_NO_TRANSACTION) {
            tm.rollback();
        }
    }

    /** The one resource of the transaction, committed in one phase; its commit fails with {@code code}, or succeeds (0). */
    void enlistOneResource(int code) throws Exception {
        tm.getTransaction().enlistResource(new Resource(code));
    }

    @Test
    void aTransactionTheBridgeBeganAroundWorkWhoseOnePhaseCommitLostItsConnectionIsNotToldCommitted() {
        List<dev.idempotency.core.TransactionBridge.Outcome> outcomes = new CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> bridge.required(() -> {
            enlistOneResource(XAException.XAER_RMFAIL);
            bridge.afterCompletion(told::add);
            bridge.afterOutcome(outcomes::add);
            return null;
        })).as("the manager's own word: the outcome is not known").hasStackTraceContaining("HeuristicMixedException");
        assertThat(told).as("told once, not committed").containsExactly(false);
        assertThat(outcomes).as("and, to who asks, unknown: neither committed nor rolled back")
                .containsExactly(dev.idempotency.core.TransactionBridge.Outcome.UNKNOWN);
    }

    @Test
    void everyStepIsToldEvenWhenOneFails() throws Exception {
        bridge.required(() -> {
            enlistOneResource(0);
            bridge.afterCompletion(c -> {
                throw new IllegalStateException("a step failed");
            });
            bridge.afterCompletion(told::add);
            return null;
        });
        assertThat(told).containsExactly(true);
    }

    @Test
    void aTransactionTheBridgeBeganOnTheThreadWhoseOnePhaseCommitLostItsConnectionIsNotToldCommitted() throws Exception {
        var begun = bridge.begin();
        enlistOneResource(XAException.XAER_RMFAIL);
        bridge.afterCompletion(told::add);
        assertThatThrownBy(begun::commit).hasStackTraceContaining("HeuristicMixedException");
        assertThat(told).containsExactly(false);
    }

    @Test
    void aCommitThatReturnedIsToldCommittedOnceAndARollbackNotCommitted() throws Exception {
        bridge.required(() -> {
            enlistOneResource(0);
            bridge.afterCompletion(told::add);
            return null;
        });
        var begun = bridge.begin();
        enlistOneResource(0);
        bridge.afterCompletion(told::add);
        begun.commit();
        assertThatThrownBy(() -> bridge.required(() -> {
            bridge.afterCompletion(told::add);
            throw new IllegalStateException("the work failed");
        })).hasMessage("the work failed");
        assertThat(told).containsExactly(true, true, false);
    }

    @Test
    void aTransactionTheCallerCommitsIsToldWhatTheManagerSays() throws Exception {
        tm.begin();
        enlistOneResource(XAException.XAER_RMFAIL);
        bridge.afterCompletion(told::add);
        assertThatThrownBy(tm::commit).isInstanceOf(jakarta.transaction.HeuristicMixedException.class);
        assertThat(told).as("the library cannot know better: the guide says to flush the cache after a failover")
                .containsExactly(true);
    }

    @Test
    void anotherTransactionCommittedOnTheThreadDuringTheBridgesWorkIsToldAtOnce() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        bridge.required(() -> {
            enlistOneResource(0);
            bridge.afterCompletion(c -> order.add("own " + c));
            new TransactionManagerRequiresNew(tm).run(() -> {
                try {
                    enlistOneResource(0);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                bridge.afterCompletion(c -> order.add("inner " + c));
                return null;
            });
            order.add("work returned");
            return null;
        });
        assertThat(order).containsExactly("inner true", "work returned", "own true");
    }

    /** A resource whose commit fails with an XA error code (0: succeeds). */
    record Resource(int code) implements XAResource {
        @Override
        public void commit(Xid xid, boolean onePhase) throws XAException {
            if (code != 0) {
                throw new XAException(code);
            }
        }

        @Override
        public void end(Xid xid, int flags) {
        }

        @Override
        public void forget(Xid xid) {
        }

        @Override
        public int getTransactionTimeout() {
            return 0;
        }

        @Override
        public boolean isSameRM(XAResource other) {
            return other == this;
        }

        @Override
        public int prepare(Xid xid) {
            return XA_OK;
        }

        @Override
        public Xid[] recover(int flag) {
            return new Xid[0];
        }

        @Override
        public void rollback(Xid xid) {
        }

        @Override
        public boolean setTransactionTimeout(int seconds) {
            return true;
        }

        @Override
        public void start(Xid xid, int flags) {
        }
    }
}
