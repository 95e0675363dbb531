/**
 * Internal: the JAX-RS {@code Idempotency-Key} filter, its dynamic feature, stored responses and problem
 * details. Registered automatically; not API.
 */
package dev.idempotency.jaxrs;
