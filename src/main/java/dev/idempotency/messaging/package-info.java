/**
 * The message door: one reader per kind of message (a JMS message, a Reactive Messaging record of one broker), chosen once per method when the application starts, and how a consumer's message is acknowledged after its transaction. Internal: not API.
 */
package dev.idempotency.messaging;
