package dev.idempotency.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * Which records a management deletion ({@link StoreManagement#delete}) removes. Whatever it selects, a claim
 * whose lease is still alive is never deleted: its holder is running the operation, and a deleted
 * claim would let a third caller run it again.
 */
public sealed interface Deletion {

    /** Every record. */
    record All() implements Deletion {
    }

    /**
     * The records first seen before the cutoff.
     *
     * @param cutoff records first seen before this instant are selected
     */
    record FirstSeenBefore(Instant cutoff) implements Deletion {
        /**
         * Checks the cutoff.
         *
         * @param cutoff records first seen before this instant are selected
         * @throws NullPointerException when {@code cutoff} is {@code null}
         */
        public FirstSeenBefore {
            Objects.requireNonNull(cutoff, "cutoff");
        }
    }

    /**
     * The oldest records (by first seen) until at most {@code keep} remain.
     *
     * @param keep how many records remain at most
     */
    record OldestBeyond(int keep) implements Deletion {
        /**
         * Checks the count.
         *
         * @param keep how many records remain at most
         * @throws IllegalArgumentException when {@code keep} is negative
         */
        public OldestBeyond {
            if (keep < 0) {
                throw new IllegalArgumentException("keep must be zero or more");
            }
        }
    }
}
