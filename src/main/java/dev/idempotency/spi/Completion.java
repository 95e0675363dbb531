package dev.idempotency.spi;

import java.time.Instant;

/**
 * The final state a claim holder writes.
 *
 * @param status          {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
 * @param response        the response to replay (opaque bytes, may be empty)
 * @param now             the engine's clock reading
 * @param joinTransaction whether the write should join the caller's active transaction when the store can
 *                        (the business effects and the record then commit together); otherwise the store
 *                        commits it on its own
 */
public record Completion(RecordStatus status, byte[] response, Instant now, boolean joinTransaction) {
    /**
     * Checks the status.
     *
     * @param status          {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
     * @param response        the response to replay (opaque bytes, may be empty)
     * @param now             the engine's clock reading
     * @param joinTransaction whether the write should join the caller's active transaction when the store can
     * @throws IllegalArgumentException when {@code status} is {@link RecordStatus#IN_PROGRESS}
     */
    public Completion {
        if (status == RecordStatus.IN_PROGRESS) {
            throw new IllegalArgumentException("a completion is COMPLETED or FAILED");
        }
    }
}
