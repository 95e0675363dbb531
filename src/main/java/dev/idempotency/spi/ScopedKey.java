package dev.idempotency.spi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Where a key is unique: (namespace, principal, key). {@link #id()} is a stable 64-character hex digest of
 * the three, used by stores as the record's primary key.
 *
 * @param namespace the operation's namespace, at most 200 characters
 * @param principal the caller's name, {@code "anonymous"}, or {@code ""} when keys are not scoped per caller
 * @param key       the client's key, 1 to 255 characters
 */
public record ScopedKey(String namespace, String principal, String key) {

    /** The longest namespace, in characters. */
    public static final int MAX_NAMESPACE = 200;
    /** The longest principal part, in characters (longer names are shortened by {@link #principal(String)}). */
    public static final int MAX_PRINCIPAL = 200;
    /** The longest key, in characters. */
    public static final int MAX_KEY = 255;

    /**
     * Checks the three parts.
     *
     * @param namespace the operation's namespace, at most 200 characters
     * @param principal the caller's name, {@code "anonymous"}, or {@code ""} when keys are not scoped per caller
     * @param key       the client's key, 1 to 255 characters
     * @throws NullPointerException     when a part is {@code null}
     * @throws IllegalArgumentException when a part is longer than its maximum
     */
    public ScopedKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(key, "key");
        if (namespace.length() > MAX_NAMESPACE || principal.length() > MAX_PRINCIPAL || key.length() > MAX_KEY) {
            throw new IllegalArgumentException("namespace, principal or key too long for " + describe(namespace, principal, key));
        }
    }

    /**
     * A principal's name as stored: itself when it fits in {@value #MAX_PRINCIPAL} characters, else a
     * prefix, {@code ~} and its SHA-256, so that long names stay distinct (a name of the column's length that has that
     * shape is shortened too: none can pass for another's shortened form).
     *
     * @param name the principal's name
     * @return the name as stored, at most {@value #MAX_PRINCIPAL} characters
     */
    public static String principal(String name) {
        if (name.length() < MAX_PRINCIPAL || name.length() == MAX_PRINCIPAL && name.charAt(MAX_PRINCIPAL - 65) != '~') {
            return name;
        }
        // Shortened: a prefix, '~' and the name's SHA-256. A name that already has that shape (as long as the column,
        // '~' 65 characters from its end) is shortened too, so that no name can pass for another's shortened one.
        String hash = HexFormat.of().formatHex(sha256().digest(name.getBytes(StandardCharsets.UTF_8)));
        return name.substring(0, MAX_PRINCIPAL - hash.length() - 1) + "~" + hash;
    }

    /** The principal part of a caller's keys when nobody is authenticated. */
    public static final String ANONYMOUS = "anonymous";

    /**
     * The principal part of a caller's keys (one caller's key never answers another's), the one rule for every door:
     * {@code ""} when keys are not scoped per caller, {@value #ANONYMOUS} when there is no authenticated caller (no
     * principal, or one without a name), else {@link #principal(String) its name as stored},
     * {@link #authenticated(String) escaped} when it could be taken for an anonymous scope.
     *
     * @param caller          the authenticated caller, or {@code null}
     * @param scopedPerCaller whether keys are scoped per caller
     * @return the principal part of the caller's keys
     */
    public static String principalOf(java.security.Principal caller, boolean scopedPerCaller) {
        if (!scopedPerCaller) {
            return "";
        }
        String name = caller == null ? null : caller.getName();
        return name == null || name.isEmpty() ? ANONYMOUS : principal(authenticated(name));
    }

    /** What an authenticated caller's name is escaped with when it could be taken for an anonymous scope. */
    static final String ESCAPE = "~";

    /**
     * An authenticated caller's name as a scope that no unauthenticated caller shares: itself, unless it is
     * {@value #ANONYMOUS}, starts with {@code anonymous:} (the scopes of anonymous callers and of API client ids), or
     * starts with {@value #ESCAPE}: then {@value #ESCAPE} and the name. Two names never meet (the escaped ones all start
     * with {@value #ESCAPE}, which no unescaped one does), and every other name is kept as it was.
     *
     * @param name an authenticated caller's name, not empty
     * @return the scope of that caller's keys (before shortening)
     */
    public static String authenticated(String name) {
        return name.equals(ANONYMOUS) || name.startsWith(ANONYMOUS + ":") || name.startsWith(ESCAPE) ? ESCAPE + name : name;
    }

    /**
     * The record id: SHA-256 over the three parts, each length-prefixed, as lower-case hex.
     *
     * @return 64 lower-case hex digits
     */
    public String id() {
        MessageDigest sha = sha256();
        for (String part : new String[] {namespace, principal, key}) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            sha.update((byte) (bytes.length >>> 8));
            sha.update((byte) bytes.length);
            sha.update(bytes);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /**
     * This key as it is kept when keys are hashed at rest ({@code idempotency.store-keys=hashed}): the same namespace,
     * no principal, and as the key the 64 hex digits of {@link #id()}, the SHA-256 of the length-prefixed namespace,
     * principal and key. Two callers' keys stay apart (the principal is in the digest), and neither the client's
     * key nor the principal's name is written anywhere: store, export, cache, messages and events see this one.
     *
     * @return a new scoped key: this namespace, principal {@code ""}, and {@link #id()} as the key
     */
    public ScopedKey hashed() {
        return new ScopedKey(namespace, "", id());
    }

    /**
     * The key as text that no other key shares: each of namespace and principal prefixed by its length, then
     * the key. What caches and in-memory wake-ups are keyed by: building it costs a string concatenation, where
     * {@link #id()} costs a digest, and a replay from the cache must not pay for one.
     *
     * @return the length-prefixed namespace and principal followed by the key
     */
    public String cacheId() {
        return namespace.length() + ":" + namespace + principal.length() + ":" + principal + key;
    }

    /** For messages: names the scope and key, nothing else. */
    @Override
    public String toString() {
        return describe(namespace, principal, key);
    }

    private static String describe(String namespace, String principal, String key) {
        return "key '" + key + "' in namespace '" + namespace + "'"
                + (principal.isEmpty() ? "" : " for principal '" + principal + "'");
    }

    /** Looking a digest up costs more than hashing a key: one per thread, reset before each use. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    });

    static MessageDigest sha256() {
        MessageDigest sha = SHA_256.get();
        sha.reset();
        return sha;
    }
}
