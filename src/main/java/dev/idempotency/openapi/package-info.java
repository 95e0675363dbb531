/**
 * Internal: the application's OpenAPI document as API clients need it. The OpenAPI filter adds, to each
 * {@code @Idempotent} JAX-RS operation, its key header, the answers the library gives itself (problem+json) and the
 * replay markers; the annotation processor lists, at compile time, the classes it looks at. Not API: the filter's
 * class name and its configuration keys are what applications name.
 */
package dev.idempotency.openapi;
