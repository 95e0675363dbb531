package dev.idempotency.cache;

import dev.idempotency.spi.IdempotencyRecord;

/**
 * The records this node decoded from its cache's entries most recently, each beside the very array it was decoded
 * from: a duplicate of a hot key, answered from the cache again and again, finds the entry's array here and skips its
 * MAC and its decoding.
 *
 * <p>Only the same array counts ({@code ==}): the cache hands back the array it holds, and any change of the entry (a
 * completion, a tombstone, an eviction and a reload, an entry from another node) is another array, which misses and is
 * verified and decoded afresh. An array from the cache is never written to (not by the library, not by Infinispan), so
 * the check that admitted it once holds for as long as the cache holds it. A cache that copies its values on every read
 * (a remote one, or one that stores them as bytes) always misses: no harm, no gain.
 *
 * <p>Bounded: {@value #SLOTS} slots, one per hash of the entry's id, the later record replacing the earlier (at most
 * {@value #SLOTS} records kept alive beyond the cache's own). Lock-free: a slot is one reference to an immutable pair,
 * read and written without a lock; a reader sees either pair whole (its fields are final) or a miss.
 */
final class DecodedEntries {

    static final int SLOTS = 1024;

    private record Decoded(String id, byte[] bytes, IdempotencyRecord record) {
    }

    private final Decoded[] slots = new Decoded[SLOTS];

    /** The record decoded from this very array under this id; {@code null} when it is not the one remembered. */
    IdempotencyRecord of(String id, byte[] bytes) {
        Decoded d = slots[slot(id)];
        return d != null && d.bytes == bytes && d.id.equals(id) ? d.record : null;
    }

    /** Remembers the record an entry's array verified and decoded to, once it is known to be of the key its id names. */
    void remember(String id, byte[] bytes, IdempotencyRecord record) {
        slots[slot(id)] = new Decoded(id, bytes, record);
    }

    private static int slot(String id) {
        int h = id.hashCode();
        return (h ^ (h >>> 16)) & (SLOTS - 1);
    }
}
