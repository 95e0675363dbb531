package dev.idempotency.cache;

import org.infinispan.conflict.EntryMergePolicy;
import org.infinispan.container.entries.CacheEntry;
import org.infinispan.container.entries.MortalCacheEntry;

import java.util.List;

/**
 * What the records cache keeps of an entry whose copies differ when a split cluster merges again. The store judges
 * every key, so a copy is only kept where it cannot be a wrong answer; anything else is dropped, and the store answers:
 *
 * <ul>
 * <li>a running marker is dropped: its claim is judged by the store, and a marker kept after its holder finished (or
 *     one removed on one side and not the other) would only hold duplicates off for nothing;</li>
 * <li>a tombstone (the key released or deleted on one side) wins over a record: the record may be the one deleted;</li>
 * <li>a record whose copies differ, or that one side lacks, is dropped: the side that lacks it may have deleted it (its
 *     tombstone lives a minute; a split may last longer), and the next duplicate reads it from the store again.</li>
 * </ul>
 * Copies that are the same on every side are no conflict, and stay.
 *
 * <p>A copy is dropped by writing one that is already expired (a lifespan of a millisecond) to every node, not by
 * returning {@code null}: Infinispan applies a {@code null} result as a remove run by the key's primary owner, and a
 * remove of a key that owner lacks changes nothing anywhere, so the copy a node of the other side held stayed there.
 */
final class RecordMergePolicy implements EntryMergePolicy<String, byte[]> {

    @Override
    public CacheEntry<String, byte[]> merge(CacheEntry<String, byte[]> preferred, List<CacheEntry<String, byte[]>> others) {
        CacheEntry<String, byte[]> any = preferred != null ? preferred : others.isEmpty() ? null : others.get(0);
        if (any == null) {
            return null;
        }
        if (InfinispanRecordCache.isMarkerId(any.getKey())) {
            return gone(any);
        }
        for (CacheEntry<String, byte[]> e : concat(preferred, others)) {
            byte[] value = e == null ? null : bytes(((CacheEntry<?, ?>) e).getValue());
            if (value != null && InfinispanRecordCache.isTombstone(value)) {
                return e;
            }
        }
        return gone(any);
    }

    /** A copy of the entry that has expired by the time any node reads it: the key is absent on every node. */
    private static CacheEntry<String, byte[]> gone(CacheEntry<String, byte[]> entry) {
        return new MortalCacheEntry(entry.getKey(), ((CacheEntry<?, ?>) entry).getValue(), 1, System.currentTimeMillis());
    }

    /**
     * An entry's bytes: conflict resolution hands the policy the stored form, a {@code WrappedByteArray}, not the
     * {@code byte[]} the cache's type says (a cast failed every merge, and no rule applied).
     */
    static byte[] bytes(Object value) {
        if (value instanceof byte[] b) {
            return b;
        }
        if (value instanceof org.infinispan.commons.marshall.WrappedByteArray w) {
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
