package dev.idempotency.messaging;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a bean's own transaction, in which the method acknowledged its record, rolls back: while the method runs, the
 * call fails (the library refuses the record); once the library has read the call's outcome, the record is refused
 * at once. Either way it is answered, once: never left without an acknowledgement or a refusal.
 */
class SettlementTest {

    final AtomicInteger acks = new AtomicInteger();
    final List<Throwable> nacks = new CopyOnWriteArrayList<>();
    final Message<String> record = Message.of("payload", () -> {
        acks.incrementAndGet();
        return CompletableFuture.completedFuture(null);
    }, reason -> {
        nacks.add(reason);
        return CompletableFuture.completedFuture(null);
    });

    @Test
    void aRollbackWhileTheMethodRunsFailsTheCall() {
        Settlement s = new Settlement();
        s.attempt();
        s.nestedRolledBack(record, 1);
        assertThat(nacks).as("not refused yet: the call fails, and the library refuses it then").isEmpty();
        assertThat(s.workEnded()).as("the call is told its work did not all happen").isTrue();
    }

    /** The window between the method's return (its outcome read) and the library's return to the connector. */
    @Test
    void aRollbackAfterTheOutcomeWasReadRefusesTheRecordAtOnce() {
        Settlement s = new Settlement();
        s.attempt();
        assertThat(s.workEnded()).isFalse();
        s.nestedRolledBack(record, 1);
        assertThat(nacks).as("refused, so that it comes again").singleElement().isInstanceOf(Settlement.NotDone.class);
        s.returned();
        s.asked(record, null, null); // the method's own acknowledgement, asked for late: the record was answered already
        assertThat(acks).as("answered once: the refusal").hasValue(0);
        assertThat(nacks).hasSize(1);
    }

    @Test
    void anEarlierAttemptsRollbackIsIgnored() {
        Settlement s = new Settlement();
        s.attempt();
        s.attempt(); // the work runs again (an optimistic claim after its first transaction rolled back)
        s.nestedRolledBack(record, 1);
        assertThat(s.workEnded()).isFalse();
        assertThat(nacks).isEmpty();
    }
    /**
     * The method refused its record while it ran (a failure it keeps), but another call's answer for the key came first
     * (the failure was not kept): the run is superseded, and the record is answered as a duplicate of that call's, not
     * with the run's own refusal. Without the reset the refusal would go out as the call returns.
     */
    @Test
    void aRunSupersededByAnotherCallsAnswerIsAnsweredAsItsDuplicate() {
        Settlement s = new Settlement();
        s.attempt();
        s.asked(record, null, new IllegalStateException("declined"));
        assertThat(nacks).as("the refusal is the call's failure while it runs").isEmpty();
        s.attempt(); // superseded: the key's answer is another call's
        s.returned();
        assertThat(nacks).as("the run's own refusal no longer counts").isEmpty();
        s.once(record, null); // answered as that call's duplicate: acknowledged
        assertThat(acks).hasValue(1);

        Settlement unreset = new Settlement();
        unreset.attempt();
        unreset.asked(record, null, new IllegalStateException("declined"));
        unreset.returned();
        assertThat(nacks).as("not superseded: the refusal goes out as the call returns").hasSize(1);
    }
}
