package dev.idempotency;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The programmatic API (see the guide's page on it, docs/programmatic.adoc), for flows that are neither a
 * resource method nor one method call: a gateway that sees requests, a checkout of several steps. Inject it:
 * the library provides it as a CDI bean over the same store and cache as the annotations (its implementation is
 * internal). Thread-safe; every operation works the same on many nodes as on one.
 */
public interface IdempotencyManager {

    /** What {@link #check} found. */
    record Check(boolean seen, Optional<Duration> sinceLastSeen, boolean responseStored) {
    }

    /** Called once when a response for the request is stored, on any node. */
    @FunctionalInterface
    interface ResponseListener {
        /**
         * A response for the request was stored.
         *
         * @param key      the request
         * @param response the stored response
         */
        void stored(RequestKey key, byte[] response);
    }

    /**
     * Whether the primary id was seen before, how long ago it was last seen, and whether a response is stored
     * for this request; records "seen now", in the store, so that every node and every cache mode agree. Answered
     * from the cache once the id is known (no SQL once the response is cached; until then, whether one is stored is read
     * from the store, since another node may have stored it; the store learns the sighting within a second). A request type
     * that is disabled is never reported as seen, and nothing is recorded for it.
     *
     * @param key the request: primary id, secondary id and request type
     * @return whether the primary id was seen, since when, and whether a response is stored
     * @throws IdempotencyRequestTypeException for an unlisted type when the default is {@code error}
     * @throws IdempotencyStoreException       when the store, which answers what the cache does not know, cannot be read
     */
    Check check(RequestKey key);

    /**
     * Stores the response of a request (primary and secondary id). Storing the same bytes again does nothing.
     *
     * @param key      the request
     * @param response the response to store
     * @throws IdempotencyKeyReusedException when another response is stored already
     * @throws IdempotencyInProgressException when another response is being stored (or its store died, until its lease
     *                                        ends): {@link #await} it
     */
    void store(RequestKey key, byte[] response);

    /**
     * Stores a text response, in UTF-8.
     *
     * @param key      the request
     * @param response the response to store
     * @throws IdempotencyKeyReusedException when another response is stored already
     */
    default void store(RequestKey key, String response) {
        store(key, response.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * The stored response of a request (primary and secondary id).
     *
     * @param key the request
     * @return the stored response
     * @throws IdempotencyResponseNotFoundException when there is none
     */
    byte[] retrieve(RequestKey key);

    /**
     * Waits for a response of the request to be stored, on any node, up to the timeout; empty at the
     * timeout. Woken by the store itself, not by polling.
     *
     * @param key     the request
     * @param timeout the longest wait
     * @return the stored response, or empty at the timeout
     */
    Optional<byte[]> await(RequestKey key, Duration timeout);

    /**
     * Calls the listener once, when a response of the request is stored on any node (at once when it is
     * stored already). The same moment is fired as a {@link dev.idempotency.events.ResponseStored} CDI event.
     *
     * @param key      the request
     * @param listener called once with the stored response
     */
    void addListener(RequestKey key, ResponseListener listener);

    /**
     * Writes every record to a file: JSON Lines, UTF-8, a header line
     * {@code {"format":"idempotency-jakarta-export","version":1,"records":N}} then one record per line
     * (responses in base64). Written to a temporary file beside it, then moved into place.
     *
     * @param file the file to write
     * @return how many records were written
     * @throws IdempotencyTransferException when the file cannot be written
     */
    int export(Path file);

    /**
     * Reads an export back: every record is read and checked first, then all are written in one
     * transaction, replacing records with the same keys. A file that cannot be read, is corrupt, or holds
     * fewer records than its header says changes nothing. Not imported: a claim (a call that was running when
     * the file was written: the key holds what came of it), a record expired by now, and a record whose key
     * holds an answer completed later or at the same instant (the key's answer since, which callers were given).
     *
     * @param file an export written by {@link #export}
     * @return how many of the file's records were imported: the finished ones not expired (each written unless
     *         its key holds a later answer, or the same)
     * @throws IdempotencyTransferException when the file cannot be imported
     */
    int importFrom(Path file);

    /**
     * Deletes every record (the annotations' too) but the claims of calls running now; returns how many.
     * In batches ({@code idempotency.purge.batch-size} a transaction); only the deleted keys leave the cache.
     *
     * @return how many records were deleted
     */
    int clear();

    /**
     * Deletes the records first seen longer ago than the age, but running calls' claims; returns how many.
     *
     * @param age records first seen longer ago than this are deleted
     * @return how many records were deleted
     */
    int clearOlderThan(Duration age);

    /**
     * Deletes the oldest records until at most {@code max} remain (running calls' claims are kept and counted);
     * returns how many it deleted.
     *
     * @param max how many records remain at most
     * @return how many records were deleted
     */
    int trimTo(int max);

    /**
     * Empties the cache of finished records, on every node when it is clustered; deletes nothing from the store.
     * Every key is still answered, by the store, until the cache has learnt it again: the next duplicate of each
     * key costs a database round trip. For an operator who suspects the cache, and for tests that prove nothing
     * depends on it. The sightings the cache held are recorded in the store first.
     */
    void flushCache();
}
