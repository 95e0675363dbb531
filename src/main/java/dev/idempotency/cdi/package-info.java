/** Internal: the CDI portable extension, the interceptor and the runtime bean. Not API. */
package dev.idempotency.cdi;
