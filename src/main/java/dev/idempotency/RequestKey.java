package dev.idempotency;

import java.util.Objects;

/**
 * A request as {@link IdempotencyManager} sees it: the primary id (the client's key, what detection and
 * waiting use), an optional secondary id (storage and retrieval use both: several responses under one
 * request, such as the steps of a checkout), and an optional request type (enabled or disabled by
 * configuration).
 *
 * @param primaryId   1 to 255 printable ASCII characters
 * @param secondaryId {@code null} for none; 1 to 255 printable ASCII characters otherwise
 * @param requestType {@code null} for none
 */
public record RequestKey(String primaryId, String secondaryId, String requestType) {

    /**
     * Checks the primary id.
     *
     * @param primaryId   1 to 255 printable ASCII characters
     * @param secondaryId {@code null} for none; 1 to 255 printable ASCII characters otherwise
     * @param requestType {@code null} for none
     * @throws NullPointerException when {@code primaryId} is {@code null}
     */
    public RequestKey {
        Objects.requireNonNull(primaryId, "primaryId");
    }

    /**
     * A request with a primary id only.
     *
     * @param primaryId the client's key
     * @return a request without secondary id or request type
     */
    public static RequestKey of(String primaryId) {
        return new RequestKey(primaryId, null, null);
    }

    /**
     * This request with a secondary id.
     *
     * @param secondaryId the secondary id, or {@code null} for none
     * @return a new request; this one is unchanged
     */
    public RequestKey withSecondaryId(String secondaryId) {
        return new RequestKey(primaryId, secondaryId, requestType);
    }

    /**
     * This request with a request type.
     *
     * @param requestType the request type, or {@code null} for none
     * @return a new request; this one is unchanged
     */
    public RequestKey withType(String requestType) {
        return new RequestKey(primaryId, secondaryId, requestType);
    }
}
