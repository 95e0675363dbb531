/**
 * The Infinispan cache in front of the store and the cluster-wide wake-ups. {@link
 * dev.idempotency.cache.InfinispanRecordCache} and {@link dev.idempotency.cache.CacheManagers} are usable
 * directly (stable); their internals are not API.
 */
package dev.idempotency.cache;
