/**
 * The storage SPI (stable): implement {@link dev.idempotency.spi.IdempotencyStore} and expose it as a CDI
 * bean to replace the JPA store. Records, claims, tickets and the shared claim rules.
 */
package dev.idempotency.spi;
