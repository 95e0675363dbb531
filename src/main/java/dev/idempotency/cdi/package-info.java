/**
 * The container wiring, and only that: the portable extension (Weld: every Jakarta EE server, Helidon MP) and the build
 * compatible extension (Quarkus) register the interceptor and the library's beans, resolve every {@code @Idempotent}
 * method when the application starts, and choose each method's reader. The only package that knows every door.
 * Internal: not API.
 */
package dev.idempotency.cdi;
