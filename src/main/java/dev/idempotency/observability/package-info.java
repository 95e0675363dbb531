/**
 * What the engine reports: the library's counters and timers, CDI events, MicroProfile Metrics and OpenTelemetry. Internal: not API.
 */
package dev.idempotency.observability;
