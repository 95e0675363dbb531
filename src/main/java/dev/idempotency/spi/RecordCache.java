package dev.idempotency.spi;

import java.util.Optional;

/**
 * A cache of finished records in front of the store, so that a duplicate of a finished key is answered
 * without asking the store. It may only ever say "seen, and here is the finished record": a miss always goes
 * to the store, which alone judges "new". Entries are put after the completion committed, are evicted on
 * release, and never outlive their record ({@link IdempotencyRecord#expiresAt()}).
 */
public interface RecordCache {

    /** No cache: every request asks the store. */
    RecordCache NONE = new RecordCache() {
        @Override
        public Optional<IdempotencyRecord> get(ScopedKey key) {
            return Optional.empty();
        }

        @Override
        public void put(IdempotencyRecord finished) {
        }

        @Override
        public void evict(ScopedKey key) {
        }
    };

    /**
     * The finished record of a key, if this cache holds it.
     *
     * @param key the record's scope and key
     * @return the finished record, or empty when this cache does not hold it
     */
    Optional<IdempotencyRecord> get(ScopedKey key);

    /**
     * Holds a finished record until its expiry: one that has just committed, put by the node that finished it.
     *
     * @param finished the finished record
     */
    void put(IdempotencyRecord finished);

    /**
     * Holds a finished record as {@link #put} does, for at most {@code atMost} ({@code null}: until its expiry): an
     * entry that changes after it was put (a sighting's "last seen") and that a cache of each node's own could
     * otherwise answer for its whole life. A cache that cannot bound an entry's life does not hold it.
     *
     * @param finished the finished record
     * @param atMost   the longest time to hold it, or {@code null} for until its expiry
     */
    default void put(IdempotencyRecord finished, java.time.Duration atMost) {
        if (atMost == null) {
            put(finished);
        }
    }

    /**
     * Holds a finished record that was read from the store, unless its key was evicted or removed since (a
     * release or a deletion that raced with the read): such a put would make the cache outlive its record.
     * A cache that cannot tell puts it as {@link #put} does.
     *
     * @param finished the finished record, as read from the store
     */
    default void putLoaded(IdempotencyRecord finished) {
        put(finished);
    }

    /**
     * As {@link #putLoaded(IdempotencyRecord)}, for a record whose read from the store started at {@code readStarted}:
     * a cache emptied since that moment ({@link #clear}: a flush, an import) does not take it, since the store may
     * have held another record by then. The library calls this one.
     *
     * @param finished    the finished record, as read from the store
     * @param readStarted when the read that found it started, or {@code null} when unknown (then taken only if the
     *                    cache was not emptied lately)
     */
    default void putLoaded(IdempotencyRecord finished, java.time.Instant readStarted) {
        putLoaded(finished);
    }

    /**
     * Forgets a key (released, deleted).
     *
     * @param key the scope and key to forget
     */
    void evict(ScopedKey key);

    /**
     * Forgets a deleted record's key (nobody waits on a record that is not a live claim).
     *
     * @param key the scope and key of the deleted record
     */
    default void remove(ScopedKey key) {
        evict(key);
    }

    /**
     * Forgets a record the store is about to delete, before it deletes it: a cache shared with other processes writes
     * the key's tombstone on every node before this returns, or throws, and the record is then not deleted (the other
     * nodes would otherwise go on answering it). The default is {@link #remove}.
     *
     * @param key the scope and key of the record about to be deleted
     * @throws dev.idempotency.IdempotencyCacheException the cache could not be told in time
     */
    default void removeBeforeDeleting(ScopedKey key) {
        remove(key);
    }

    /**
     * Marks a key as being run right now, by one call of one node, for at most {@code atMost}: the optimistic claim's
     * in-progress marker, which holds concurrent duplicates on every node that shares this cache off before they run.
     * A marker is a courtesy, never the judge: the store's unique key is. A cache that cannot mark (the default) answers
     * {@code true}, and duplicates on other nodes are then held off by the store alone (the loser's work rolls back).
     *
     * @param key    the scope and key
     * @param holder who marks it (unique per call), so that only its holder removes it
     * @param atMost how long the marker lives when its holder never removes it (a node that stopped)
     * @return whether this call holds the marker now; {@code false}: another call holds it
     */
    default boolean mark(ScopedKey key, String holder, java.time.Duration atMost) {
        return true;
    }

    /**
     * Removes a marker of {@link #mark}, when its holder's call is over (committed or rolled back); another holder's
     * marker is left alone.
     *
     * @param key    the scope and key
     * @param holder the holder given to {@link #mark}
     */
    default void unmark(ScopedKey key, String holder) {
    }

    /**
     * How long a waiter of this node may wait for this cache's wake-up before it looks at the store itself;
     * {@code null}: as long as it takes (a completion on any node reaches this node's waiters through the cache, or
     * the holder's lease ends). A cache whose wake-ups can be lost (a remote one: a completion whose write to the
     * servers failed, a listener the client dropped, servers out of reach) bounds the wait.
     *
     * @return the longest wait before looking at the store, or {@code null} for no bound (the default)
     */
    default java.time.Duration lookAgainAfter() {
        return null;
    }

    /**
     * Forgets everything (a flush; records deleted or replaced in bulk), and keeps out what was read or finished
     * before: for a while afterwards, a record read from the store before the clear ({@link #putLoaded(IdempotencyRecord,
     * java.time.Instant)}), or a finished record last seen before it ({@link #put}), is not taken, as a released key's
     * tombstone keeps out an older read of that key.
     */
    default void clear() {
    }
}
