/** The CDI events the library fires (stable API). */
package dev.idempotency.events;
