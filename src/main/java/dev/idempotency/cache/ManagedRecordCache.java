package dev.idempotency.cache;

import dev.idempotency.spi.RecordCache;

/**
 * A {@link RecordCache} the library started or was given, as the runtime sees it: whether other processes share it,
 * what it is (for the start-up log), and its health (for the readiness check).
 */
public interface ManagedRecordCache extends RecordCache, AutoCloseable {

    /** Whether other processes read and write it (a cluster, or an Infinispan Server): its entries' MACs are checked. */
    boolean shared();

    /** What it is, for the start-up log: {@code "an Infinispan cache (local)"}. */
    String description();

    /**
     * The application nodes that share it, as its cluster sees them (1 for a local cache); {@code -1} where the cache
     * lives elsewhere (an Infinispan Server) and the number says nothing about this node.
     */
    int members();

    /** Whether it answers now; {@code false} while it is bypassed after a failure (the store answers meanwhile). */
    default boolean reachable() {
        return true;
    }

    /**
     * How many times its listener was registered anew after it failed or fell silent (a remote cache's; 0 for the
     * others), for tests and operations.
     */
    default long listenerRenewals() {
        return 0;
    }

    /** Entries held (records and recent tombstones), for tests and operations; on a server: on every server. */
    int size();

    /** Whether it holds an entry (a record or a tombstone) for this key, for tests and operations. */
    boolean holds(dev.idempotency.spi.ScopedKey key);

    /** Stops listening for its events; what started it stops it. */
    @Override
    void close();
}
