package dev.idempotency.contract;

import dev.idempotency.ClaimMode;
import dev.idempotency.contract.FirstAnswerContract.CacheKind;
import dev.idempotency.contract.FirstAnswerContract.Door;
import dev.idempotency.contract.FirstAnswerContract.Outcome;
import dev.idempotency.core.Policy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

/**
 * Schedules the generated suite found failing on MariaDB, where the races they need show, each kept as a test that
 * failed before the fix it names; every step is followed by the contract's invariants ({@link World#check}).
 */
class MariaDbFirstAnswerRegressionTest {

    static Stack stack;
    World world;

    @BeforeAll
    static void start() {
        stack = Stack.open(dev.idempotency.testing.TestDatabase.MARIADB);
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @AfterEach
    void close() {
        if (world != null) {
            world.close();
        }
    }

    /**
     * Optimistic consumers racing on one record: a duplicate whose first run lost (its transaction rolled back, its
     * acknowledgement with it) ran again and committed, yet the rollback of its first run was still on its record, which
     * was then both acknowledged and refused. Each run of a call now starts with a clean slate. Raced fifteen times
     * with each duplicate policy.
     */
    @Test
    void anOptimisticConsumerThatRanAgainAfterLosingAcknowledgesItsRecordOnce() {
        for (Policy policy : new Policy[] {World.REJECT, World.WAIT}) {
            world = stack.world(ClaimMode.OPTIMISTIC, Door.RECORD, CacheKind.NONE);
            world.afterEveryStep(World::check);
            world.policy = policy;
            for (int i = 0; i < 15; i++) {
                world.race(i % 3, 3, Outcome.OK, false);
                if (i % 3 == 2) {
                    world.step(Duration.ofHours(2)); // the keys are new again
                }
            }
            world.close();
            world = null;
        }
    }

    /**
     * An optimistic call in the caller's transaction, which read (as applications do) before a duplicate on the other
     * node committed: under repeatable read its look at the store still saw no record, so its work ran; when that work
     * threw a failure the method keeps, the caller was answered that failure, though the key's answer was the
     * duplicate's (the failure itself was then not kept). Found by the generated suite (its shared cache emptied just
     * before). Now the failure's record is written in the caller's transaction, where it meets the duplicate's: the
     * call is told "in progress", its work rolls back, and the retry is answered the duplicate's answer.
     */
    @ParameterizedTest
    @EnumSource(value = Door.class, names = {"METHOD_IN_CALLERS_TRANSACTION", "INTERCEPTOR_IN_CALLERS_TRANSACTION"})
    void aKeptFailureInATransactionThatReadBeforeADuplicateCommittedIsNotAnswered(Door door) {
        for (CacheKind cache : new CacheKind[] {CacheKind.NONE, CacheKind.SHARED}) {
            world = stack.world(ClaimMode.OPTIMISTIC, door, cache);
            world.afterEveryStep(World::check);
            world.callAfterADuplicateCommits(0, 0, Outcome.THROWS_KEPT);
            world.call(0, 0, "A", Outcome.OK);
            world.flush(0);
            world.callAfterADuplicateCommits(1, 1, Outcome.THROWS_KEPT);
            world.callAfterADuplicateCommits(0, 2, Outcome.THROWS_RELEASED);
            world.call(1, 2, "A", Outcome.OK);
            world.close();
            world = null;
        }
    }
}
