/** The in-memory store (stable as a class; its internals are not API). */
package dev.idempotency.store.memory;
