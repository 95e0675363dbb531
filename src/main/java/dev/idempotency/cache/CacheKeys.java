package dev.idempotency.cache;

import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * The keys the cache uses, each derived from one shared secret with HMAC-SHA-256 under its own label (so that no
 * key serves two purposes): the JGroups transport's AES key (SYM_ENCRYPT), the proof a joining node shows (AUTH),
 * and the key of the cache entries' MAC.
 */
public final class CacheKeys {

    static final String MAC = "HmacSHA256";

    private final byte[] transport;
    private final byte[] joinProof;
    private final byte[] entries;
    private final boolean shared;

    private CacheKeys(byte[] secret, boolean shared) {
        this.transport = derive(secret, "idempotency-jakarta/jgroups/SYM_ENCRYPT/AES-256");
        this.joinProof = derive(secret, "idempotency-jakarta/jgroups/AUTH");
        this.entries = derive(secret, "idempotency-jakarta/cache/entry-MAC");
        this.shared = shared;
    }

    /** The keys of a secret shared by the nodes. */
    public static CacheKeys of(byte[] sharedSecret) {
        return new CacheKeys(sharedSecret, true);
    }

    /** Keys of this JVM alone, random: for a cache that no other process reads. */
    public static CacheKeys random() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return new CacheKeys(secret, false);
    }

    /**
     * Keys derived from a public name, when no secret is configured for a cache that other processes share (a cluster
     * on loopback, or one whose network is secured otherwise): entries then carry a checksum that anyone who knows the
     * name can forge. Nodes of one cluster agree on it; it protects against nothing but mistakes.
     */
    public static CacheKeys unprotected(String name) {
        return new CacheKeys(("idempotency-jakarta/no-secret/" + name).getBytes(StandardCharsets.UTF_8), false);
    }

    /** Whether the keys come from a configured secret (else: random per JVM, or from a public name). */
    public boolean fromSecret() {
        return shared;
    }

    SecretKey transportKey() {
        return new SecretKeySpec(transport, "AES");
    }

    byte[] joinProof() {
        return joinProof.clone();
    }

    /** A new MAC over entries (one per thread: {@link Mac} is not thread-safe). */
    Mac entryMac() {
        try {
            Mac mac = Mac.getInstance(MAC);
            mac.init(new SecretKeySpec(entries, MAC));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("No " + MAC + " in this JVM", e);
        }
    }

    private static byte[] derive(byte[] secret, String label) {
        try {
            Mac mac = Mac.getInstance(MAC);
            mac.init(new SecretKeySpec(secret, MAC));
            return mac.doFinal(label.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("No " + MAC + " in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "CacheKeys[" + (shared ? "from a shared secret" : "not from a secret") + "]";
    }
}
