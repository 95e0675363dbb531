package dev.idempotency.cache;

import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.testing.FakeClock;

/** The cache front with the library's own cache of the node ({@code idempotency.cache.mode=local}, the default). */
class LocalCacheFrontTest extends CacheFrontContract {

    @Override
    ManagedRecordCache newCache(String node, int port, FakeClock clock, LocalCompletionSignals signals) {
        LocalRecordCache cache = new LocalRecordCache(1000, clock, signals);
        started.add(cache);
        return cache;
    }
}
