package dev.idempotency.spi;

/** The state of a record. */
public enum RecordStatus {
    /** Claimed and running, or released (no owner): free to claim again. */
    IN_PROGRESS,
    /** Finished; the stored response is replayed. */
    COMPLETED,
    /** Finished with a failure the user asked to keep; it is replayed (rethrown). */
    FAILED
}
