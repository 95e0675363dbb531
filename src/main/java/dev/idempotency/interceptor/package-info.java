/**
 * The {@code @Idempotent} interceptor: the door of CDI beans, EJBs and message consumers. It asks the method's reader for the key, the fingerprint and how a message is settled, and names no message type. Internal: not API.
 */
package dev.idempotency.interceptor;
