/**
 * The engine assembled in a CDI container, as every door sees it: the deployment's resolved settings, the store, the cache, threads, transactions, callers, the codec of stored values, the purge. Internal: not API.
 */
package dev.idempotency.runtime;
