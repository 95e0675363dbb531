package dev.idempotency.contract;

import org.infinispan.AdvancedCache;
import org.infinispan.cache.impl.AbstractDelegatingAdvancedCache;
import org.infinispan.commons.TimeoutException;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The shared cache as a node sees it when the cluster's other members stop answering (a partition before failure
 * detection): while cut, every read and write fails as Infinispan's do when a member's answer does not come in time.
 */
final class CuttableCache extends AbstractDelegatingAdvancedCache<String, byte[]> {

    private final AtomicBoolean cut;

    CuttableCache(AdvancedCache<String, byte[]> cache, AtomicBoolean cut) {
        super(cache);
        this.cut = cut;
    }

    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    public AdvancedCache rewrap(AdvancedCache newDelegate) {
        return new CuttableCache(newDelegate, cut);
    }

    private void answer() {
        if (cut.get()) {
            throw new TimeoutException("ISPN000476: Timed out waiting for responses (the contract suite's cut)");
        }
    }

    @Override
    public byte[] get(Object key) {
        answer();
        return super.get(key);
    }

    @Override
    public byte[] put(String key, byte[] value, long lifespan, TimeUnit unit) {
        answer();
        return super.put(key, value, lifespan, unit);
    }

    @Override
    public byte[] putIfAbsent(String key, byte[] value, long lifespan, TimeUnit unit) {
        answer();
        return super.putIfAbsent(key, value, lifespan, unit);
    }

    @Override
    public boolean remove(Object key, Object value) {
        answer();
        return super.remove(key, value);
    }

    @Override
    public void clear() {
        answer();
        super.clear();
    }

    @Override
    public int size() {
        answer();
        return super.size();
    }

    @Override
    public boolean containsKey(Object key) {
        answer();
        return super.containsKey(key);
    }
}
