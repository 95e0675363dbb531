/** The library's counters and timers (stable API). */
package dev.idempotency.metrics;
