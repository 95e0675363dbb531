/** Internal: the CDI portable extension, the interceptor, the runtime bean and the {@code IdempotencyManager} bean. Not API. */
package dev.idempotency.cdi;
