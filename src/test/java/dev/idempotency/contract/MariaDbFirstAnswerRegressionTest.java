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
}
