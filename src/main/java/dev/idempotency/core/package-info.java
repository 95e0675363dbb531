/**
 * Internal: the engine (the states a key goes through: "The life of a key" in CONTRIBUTING.md), in plain Java with no
 * Jakarta dependency. Not API; it may change in any release.
 */
package dev.idempotency.core;
