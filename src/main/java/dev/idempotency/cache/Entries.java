package dev.idempotency.cache;

import org.infinispan.Cache;
import org.infinispan.context.Flag;

import java.util.concurrent.TimeUnit;

/**
 * The few operations the records cache makes on its entries: on an embedded cache as they are, on a remote one each
 * bounded in time ({@link RemoteCaches}: the Hot Rod client's own blocking calls wait up to a day for an operation
 * its connection never sent).
 */
interface Entries {

    byte[] get(String id);

    /** A put whose previous value nobody reads. */
    void put(String id, byte[] value, long lifespan, TimeUnit unit);

    void putIfAbsent(String id, byte[] value, long lifespan, TimeUnit unit);

    /** A put-if-absent that says whether it put. */
    boolean add(String id, byte[] value, long lifespan, TimeUnit unit);

    /** Removes the entry when it holds this value. */
    void removeIf(String id, byte[] value);

    void clear();

    /** Every entry, as it is met (the cache may change meanwhile). */
    void forEach(java.util.function.BiConsumer<String, byte[]> each);

    int size();

    boolean containsKey(String id);

    /** An embedded cache's entries; its puts do not fetch the previous value. */
    static Entries of(Cache<String, byte[]> cache) {
        Cache<String, byte[]> writes = cache.getAdvancedCache().withFlags(Flag.IGNORE_RETURN_VALUES);
        return new Entries() {
            @Override
            public byte[] get(String id) {
                return cache.get(id);
            }

            @Override
            public void put(String id, byte[] value, long lifespan, TimeUnit unit) {
                writes.put(id, value, lifespan, unit);
            }

            @Override
            public void putIfAbsent(String id, byte[] value, long lifespan, TimeUnit unit) {
                cache.putIfAbsent(id, value, lifespan, unit);
            }

            @Override
            public boolean add(String id, byte[] value, long lifespan, TimeUnit unit) {
                return cache.putIfAbsent(id, value, lifespan, unit) == null;
            }

            @Override
            public void removeIf(String id, byte[] value) {
                cache.remove(id, value);
            }

            @Override
            public void clear() {
                cache.clear();
            }

            @Override
            public void forEach(java.util.function.BiConsumer<String, byte[]> each) {
                cache.entrySet().forEach(e -> each.accept(e.getKey(), e.getValue()));
            }

            @Override
            public int size() {
                return cache.size();
            }

            @Override
            public boolean containsKey(String id) {
                return cache.containsKey(id);
            }
        };
    }
}
