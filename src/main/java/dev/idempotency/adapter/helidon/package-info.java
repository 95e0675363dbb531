/**
 * Helidon MP's adapters: its data sources are plain pools, whose connections the library enlists in JTA transactions itself. Loaded only on Helidon. Internal: not API.
 */
package dev.idempotency.adapter.helidon;
