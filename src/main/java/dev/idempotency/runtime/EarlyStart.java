package dev.idempotency.runtime;

/**
 * Marks the wiring that starts the engine as soon as the application's scope begins: the portable extension, a bean
 * wherever the container runs portable extensions (Weld: every Jakarta EE server, Helidon MP). Where no bean has this
 * type (Quarkus, whose build compatible extension runs while the application is built, before its data sources
 * exist), the engine starts when the application has started.
 */
public interface EarlyStart {
}
