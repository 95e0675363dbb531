/**
 * The functional door: the injectable {@code Idempotency} ({@code call}, {@code execute}, {@code with}). Internal: not API.
 */
package dev.idempotency.functional;
