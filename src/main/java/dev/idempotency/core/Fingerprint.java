package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Builds a SHA-256 fingerprint from parts. Each part is length-prefixed, so that ("ab", "c") and
 * ("a", "bc") differ. Not thread-safe; one per request, finished ({@link #hex()}) before the same thread starts
 * another.
 */
public final class Fingerprint {

    /** Looking a digest up costs as much as hashing 200 bytes: one per thread, reset by each fingerprint. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    });

    private final MessageDigest sha;
    private final byte[] length = new byte[4];

    private Fingerprint() {
        sha = SHA_256.get();
        sha.reset();
    }

    /** The SHA-256 of the bytes, as 64 lower-case hex characters (not a fingerprint of parts: no length prefix). */
    public static String sha256Hex(byte[] bytes) {
        MessageDigest sha = SHA_256.get();
        sha.reset();
        return HexFormat.of().formatHex(sha.digest(bytes));
    }

    public static Fingerprint start() {
        return new Fingerprint();
    }

    public Fingerprint add(byte[] part) {
        if (part == null) {
            sha.update((byte) 0xFF);
            return this;
        }
        int n = part.length;
        length[0] = (byte) (n >>> 24);
        length[1] = (byte) (n >>> 16);
        length[2] = (byte) (n >>> 8);
        length[3] = (byte) n;
        sha.update(length);
        sha.update(part);
        return this;
    }

    public Fingerprint add(String part) {
        return add(part == null ? null : part.getBytes(StandardCharsets.UTF_8));
    }

    /** The digest as 64 lower-case hex characters. */
    public String hex() {
        return HexFormat.of().formatHex(sha.digest());
    }
}
