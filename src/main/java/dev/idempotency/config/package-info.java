/** Internal: MicroProfile Config reading and per-method resolution. Not API. */
package dev.idempotency.config;
