package dev.idempotency.config;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.Arrays;

/**
 * The cache's shared secret ({@code idempotency.cache.secret}, or a secret key entry of
 * {@code idempotency.cache.keystore}): the key material from which the cluster's encryption and authentication keys
 * and the cache entries' MAC key are derived. Never printed: {@link #toString()} says only where it came from.
 */
public final class CacheSecret {

    /** The shortest text secret accepted: 32 characters (e.g. {@code openssl rand -base64 32} prints 44). */
    public static final int MIN_TEXT_LENGTH = 32;

    private final byte[] material;
    private final String source;

    private CacheSecret(byte[] material, String source) {
        this.material = material;
        this.source = source;
    }

    /** A text secret; at least {@value #MIN_TEXT_LENGTH} characters. */
    static CacheSecret ofText(String key, String text) {
        String t = text.strip();
        if (t.length() < MIN_TEXT_LENGTH) {
            throw new IllegalArgumentException(key + " is " + t.length() + " characters long; it must be at least "
                    + MIN_TEXT_LENGTH + " (for example the output of: openssl rand -base64 32), the same on every node");
        }
        return new CacheSecret(t.getBytes(StandardCharsets.UTF_8), key);
    }

    /** The secret key entry {@code alias} of a key store file (PKCS12 or JCEKS, found by its content). */
    static CacheSecret ofKeyStore(String path, String password, String alias) {
        String where = ConfigKey.CACHE_KEYSTORE.key() + "=" + path;
        File file = new File(path);
        if (!file.isFile()) {
            throw new IllegalArgumentException(where + " is not a readable file");
        }
        char[] pw = password.toCharArray();
        try {
            KeyStore ks = KeyStore.getInstance(file, pw);
            if (!ks.containsAlias(alias)) {
                throw new IllegalArgumentException(where + " has no entry " + alias + " (" + ConfigKey.CACHE_KEYSTORE_ALIAS.key() + ")");
            }
            if (!ks.entryInstanceOf(alias, KeyStore.SecretKeyEntry.class)) {
                throw new IllegalArgumentException(where + ": the entry " + alias + " is not a secret key; make one with "
                        + "keytool -genseckey -keyalg AES -keysize 256 -storetype PKCS12 -alias " + alias);
            }
            KeyStore.SecretKeyEntry entry = (KeyStore.SecretKeyEntry) ks.getEntry(alias, new KeyStore.PasswordProtection(pw));
            byte[] encoded = entry.getSecretKey().getEncoded();
            if (encoded == null || encoded.length < 16) {
                throw new IllegalArgumentException(where + ": the key " + alias + " is shorter than 128 bits");
            }
            return new CacheSecret(encoded, where + " (" + alias + ")");
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalArgumentException(where + " cannot be read with " + ConfigKey.CACHE_KEYSTORE_PASSWORD.key()
                    + ": " + e.getMessage());
        } finally {
            Arrays.fill(pw, '\0');
        }
    }

    /** The key material (a copy). */
    public byte[] material() {
        return material.clone();
    }

    /** Where the secret came from: its key, or the key store and alias (never the secret). */
    public String source() {
        return source;
    }

    @Override
    public String toString() {
        return "CacheSecret[" + source + "]";
    }
}
