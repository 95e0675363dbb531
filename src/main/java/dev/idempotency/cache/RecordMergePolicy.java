package dev.idempotency.cache;

import org.infinispan.commons.marshall.WrappedByteArray;
import org.infinispan.conflict.EntryMergePolicy;
import org.infinispan.container.entries.CacheEntry;
import org.infinispan.container.entries.MortalCacheEntry;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the records cache keeps of an entry whose copies differ when a split cluster merges again. The store judges
 * every key, so no copy that differs is kept: the cache only saves the store questions, and a copy kept from one side
 * may be the answer the other side deleted, or replaced.
 *
 * <ul>
 * <li>A record (or a tombstone) whose copies differ, or that one side lacks, becomes a new tombstone on every node,
 *     written at the latest of now and the tombstones' own times: the next duplicate reads the key from the store and
 *     caches it again, and a late write of a record that finished before that time (a completion still queued across
 *     the merge, a store read begun before a deletion) is kept out, as after any deletion.</li>
 * <li>A running marker is dropped: its claim is judged by the store, and a marker kept after its holder finished (or
 *     one removed on one side and not the other) would only hold duplicates off for nothing.</li>
 * </ul>
 * Copies that are the same on every side are no conflict, and stay.
 *
 * <p>No copy of a record is ever written back, not even one already expired: a write's lifespan counts from when each
 * node stores it, so a record copied "expired" is a live answer there for a millisecond or so. A marker is dropped by
 * writing it back with a lifespan of a millisecond (a marker is never read as an answer); returning {@code null} would
 * not do: Infinispan applies it as a remove run by the key's primary owner, which changes nothing where that owner
 * lacks the key.
 */
final class RecordMergePolicy implements EntryMergePolicy<String, byte[]> {

    @Override
    public CacheEntry<String, byte[]> merge(CacheEntry<String, byte[]> preferred, List<CacheEntry<String, byte[]>> others) {
        CacheEntry<String, byte[]> any = preferred != null ? preferred : others.isEmpty() ? null : others.get(0);
        if (any == null) {
            return null;
        }
        if (InfinispanRecordCache.isMarkerId(any.getKey())) {
            return expired(any);
        }
        long at = System.currentTimeMillis();
        for (CacheEntry<String, byte[]> e : concat(preferred, others)) {
            byte[] value = e == null ? null : bytes(((CacheEntry<?, ?>) e).getValue());
            if (value != null && InfinispanRecordCache.isTombstone(value)) {
                at = Math.max(at, InfinispanRecordCache.tombstoneTime(value));
            }
        }
        return tombstone(any.getKey(), at);
    }

    /** A tombstone written at {@code millis}, in the cache's stored form, for a tombstone's life. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static CacheEntry<String, byte[]> tombstone(String key, long millis) {
        byte[] tombstone = InfinispanRecordCache.tombstone(ThreadLocalRandom.current().nextLong(), millis);
        return (CacheEntry) new MortalCacheEntry(key, new WrappedByteArray(tombstone),
                TimeUnit.SECONDS.toMillis(InfinispanRecordCache.TOMBSTONE_LIFESPAN_SECONDS), System.currentTimeMillis());
    }

    /** The entry again, with a lifespan of a millisecond from when each node stores it: gone at once. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static CacheEntry<String, byte[]> expired(CacheEntry<String, byte[]> entry) {
        return (CacheEntry) new MortalCacheEntry(entry.getKey(), ((CacheEntry<?, ?>) entry).getValue(), 1, System.currentTimeMillis());
    }

    /**
     * An entry's bytes: conflict resolution hands the policy the stored form, a {@code WrappedByteArray}, not the
     * {@code byte[]} the cache's type says (a cast failed every merge, and no rule applied).
     */
    static byte[] bytes(Object value) {
        if (value instanceof byte[] b) {
            return b;
        }
        if (value instanceof WrappedByteArray w) {
            return w.getBytes();
        }
        return null;
    }

    private static List<CacheEntry<String, byte[]>> concat(CacheEntry<String, byte[]> preferred, List<CacheEntry<String, byte[]>> others) {
        if (preferred == null) {
            return others;
        }
        List<CacheEntry<String, byte[]>> all = new java.util.ArrayList<>(others.size() + 1);
        all.add(preferred);
        all.addAll(others);
        return all;
    }
}
