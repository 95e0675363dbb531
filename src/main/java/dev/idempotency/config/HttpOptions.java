package dev.idempotency.config;

/**
 * The HTTP settings of one {@code @Idempotent} resource method.
 *
 * @param header          the request header carrying the key
 * @param keepStatus      the response statuses kept and replayed; others release the key
 * @param maxResponseSize the largest response body stored, in bytes
 * @param maxRequestSize  the largest request body read, in bytes; a larger one is answered {@code 413}
 * @param failOpen        whether an unreachable store lets the request run unprotected
 * @param anonymous       what a keyed request without an authenticated principal gets
 * @param keyFrom         a JSON Pointer to the body field with the key, or empty
 * @param keyFromHeader   whether the header's key is taken first ({@code false}: only the body's, with keyFrom)
 * @param fingerprintFields JSON Pointers to the body fields fingerprinted instead of the whole body; empty: the body
 * @param expiryHeader    the response header saying until when the key is remembered, or empty for none
 */
public record HttpOptions(String header, StatusSet keepStatus, long maxResponseSize, long maxRequestSize, boolean failOpen,
                          AnonymousPolicy anonymous, String keyFrom, boolean keyFromHeader,
                          java.util.List<String> fingerprintFields, String expiryHeader) {

    /** Whether the body is read as JSON. */
    public boolean jsonBody() {
        return !keyFrom.isEmpty() || !fingerprintFields.isEmpty();
    }
}
