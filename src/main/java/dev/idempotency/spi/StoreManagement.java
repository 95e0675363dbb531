package dev.idempotency.spi;

import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

/**
 * What {@code IdempotencyManager}'s export, import and deletions ({@code clear}, {@code clearOlderThan},
 * {@code trimTo}, the management policies) need of an {@link IdempotencyStore}: an optional capability. A store
 * without it serves every annotation and the manager's detection, storage and waiting; those management calls
 * then fail with {@link UnsupportedOperationException}, naming the store.
 */
public interface StoreManagement {

    /**
     * Every record, oldest first (for export).
     *
     * @return every record the store holds, oldest first
     */
    List<IdempotencyRecord> all();

    /**
     * Every record, handed to {@code each} one at a time, each once, in an order of the store's (for an export of any
     * size): a store may read them in batches and hold few at a time. Each record is as one committed moment left it;
     * records written during the call may or may not be among them. The default reads {@link #all()}.
     *
     * @param each called with every record once
     */
    default void forEach(Consumer<IdempotencyRecord> each) {
        all().forEach(each);
    }

    /**
     * Writes these records, replacing any with the same scoped key, in one transaction: all or nothing. A finished
     * record completed later than the imported one, or at the same instant, stays (see {@link #keepsNewer}).
     *
     * @param records the records to write
     */
    void importAll(List<IdempotencyRecord> records);

    /**
     * As {@link #importAll(List)}, but refuses, writing nothing, when one of the records would replace a claim whose
     * lease is alive at {@code now} (a call running on some node: replaced, its retry would get an answer it did not
     * give, or the call would run again). The library calls this one; a store that implements only the other imports
     * over live claims.
     *
     * @param records the records to write
     * @param now     the instant at which a claim's lease is judged alive
     * @throws LiveClaimException a record's key is claimed by a call still running; nothing was written
     */
    default void importAll(List<IdempotencyRecord> records, Instant now) {
        importAll(records);
    }

    /**
     * As {@link #importAll(List, Instant)}, with the records read one at a time from {@code records} as they are written
     * (an import of any size): a store may write them in batches within its one transaction and hold few at a time. The
     * default collects them into a list.
     *
     * @param records the records to write, read once
     * @param now     the instant at which a claim's lease is judged alive
     * @throws LiveClaimException a record's key is claimed by a call still running; nothing was written
     */
    default void importEach(Iterable<IdempotencyRecord> records, Instant now) {
        List<IdempotencyRecord> all = new java.util.ArrayList<>();
        records.forEach(all::add);
        importAll(all, now);
    }

    /**
     * Whether an import leaves {@code existing} in place of {@code imported}: a finished record completed later (the
     * answer of the key's present life, which callers have been given) is never replaced by an older one, nor one
     * completed at the same instant (the same answer, whose sightings since the export would go back).
     *
     * @param existing the store's record of the key
     * @param imported the record being imported
     * @return {@code true}: skip the imported record
     */
    static boolean keepsNewer(IdempotencyRecord existing, IdempotencyRecord imported) {
        return existing.isFinished() && existing.completedAt() != null
                && (imported.completedAt() == null || !existing.completedAt().isBefore(imported.completedAt()));
    }

    /** An import met a key that a call still running has claimed: nothing was written. */
    final class LiveClaimException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient ScopedKey key;

        /** @param key the claimed key */
        public LiveClaimException(ScopedKey key) {
            super("The " + key + " is claimed by a call still running");
            this.key = key;
        }

        /** @return the claimed key */
        public ScopedKey key() {
            return key;
        }
    }

    /**
     * Deletes the records the deletion selects, oldest first, in batches of at most {@code batchSize} (one
     * transaction each; never a list of every record in memory), skipping claims whose lease is alive at
     * {@code now}; each row is judged again as it is deleted, so a row claimed or taken over in between is
     * kept. Calls {@code deleted} with the key of every record it deleted, and only those, once its batch has
     * committed (the caller evicts them from the cache). Returns how many it deleted.
     *
     * @param which     which records to delete
     * @param now       the instant at which a claim's lease is judged alive
     * @param batchSize the most records deleted in one transaction
     * @param deleted   called with the scoped key of every record deleted
     * @return how many records were deleted
     */
    int delete(Deletion which, Instant now, int batchSize, Consumer<ScopedKey> deleted);

    /**
     * As {@link #delete(Deletion, Instant, int, Consumer)}, and first calls {@code aboutToDelete} with the key of every
     * record a batch is about to delete, in the batch's transaction before its rows go (the library has a cache shared
     * with other nodes take each key's tombstone first, so that no node answers a record once it is gone); when that
     * call throws, the batch is not deleted and the exception ends the deletion (the batches before it stay deleted).
     * A key told but then kept (judged again) was only forgotten by the cache. The default cannot tell before: it
     * calls {@code deleted} alone, after each batch.
     *
     * @param which         which records to delete
     * @param now           the instant at which a claim's lease is judged alive
     * @param batchSize     the most records deleted in one transaction
     * @param aboutToDelete called with the scoped key of every record about to be deleted; may throw to stop
     * @param deleted       called with the scoped key of every record deleted, once its batch has committed
     * @return how many records were deleted
     */
    default int delete(Deletion which, Instant now, int batchSize, Consumer<ScopedKey> aboutToDelete, Consumer<ScopedKey> deleted) {
        return delete(which, now, batchSize, deleted);
    }
}
