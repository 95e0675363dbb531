/**
 * MicroProfile Health's readiness check of the store and the cache. Internal: not API.
 */
package dev.idempotency.health;
