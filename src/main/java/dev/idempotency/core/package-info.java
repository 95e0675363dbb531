/**
 * Internal: the engine (the state machine of SPEC section 2), in plain Java with no Jakarta dependency.
 * Not API; it may change in any release.
 */
package dev.idempotency.core;
