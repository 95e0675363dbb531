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

    public RequestKey {
        Objects.requireNonNull(primaryId, "primaryId");
    }

    /** A request with a primary id only. */
    public static RequestKey of(String primaryId) {
        return new RequestKey(primaryId, null, null);
    }

    /** This request with a secondary id. */
    public RequestKey withSecondaryId(String secondaryId) {
        return new RequestKey(primaryId, secondaryId, requestType);
    }

    /** This request with a request type. */
    public RequestKey withType(String requestType) {
        return new RequestKey(primaryId, secondaryId, requestType);
    }
}
