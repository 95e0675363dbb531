package dev.idempotency.config;

/**
 * The HTTP settings of one {@code @Idempotent} resource method.
 *
 * @param header          the request header carrying the key
 * @param keepStatus      the response statuses kept and replayed; others release the key
 * @param maxResponseSize the largest response body stored, in bytes
 * @param failOpen        whether an unreachable store lets the request run unprotected
 * @param anonymous       what a keyed request without an authenticated principal gets (SPEC H15)
 */
public record HttpOptions(String header, StatusSet keepStatus, long maxResponseSize, boolean failOpen,
                          AnonymousPolicy anonymous) {
}
