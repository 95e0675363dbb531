package dev.idempotency.cache;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A finished record as cache bytes: a small versioned binary form, so that the replicated cache needs no
 * marshaller configuration (Infinispan carries {@code byte[]} as is) and no Java serialisation.
 *
 * <p>Version 2: strings as a length and UTF-8 bytes, numbers big-endian. Decoding is on the replay path, so it
 * reads with a {@link ByteBuffer} and builds strings straight from the bytes (version 1's
 * {@code DataInputStream.readUTF} took a third of a replay's time beyond its floor). A record of another version
 * decodes to {@code null}: the engine then asks the store, so nodes of two versions can share a cluster.
 *
 * <p>Version 3 (this one): version 2's fields, then an HMAC-SHA-256 over everything before it (the version, the scope
 * and key, the status, fingerprint, times and response), keyed by the cache's entry key ({@link CacheKeys}). An entry
 * whose MAC does not verify is {@link Check#FORGED}: never decoded, never replayed.
 */
final class RecordBytes {

    private static final byte VERSION = 3;
    static final int MAC_LENGTH = 32;

    /** What a value in the cache is. */
    enum Check {
        /** A record of this version whose MAC verifies. */
        VERIFIED,
        /** Not a record of this version (a tombstone, another version's record, or too short to be one): ask the store. */
        OTHER,
        /** A record of this version whose MAC does not verify: forged, or written under another secret. */
        FORGED
    }
    private static final byte[] NONE = new byte[0];

    private RecordBytes() {
    }

    /** @param mac the entry's MAC; {@code null}: its place left zero (a cache whose entries nobody checks) */
    static byte[] encode(IdempotencyRecord r, javax.crypto.Mac mac) {
        byte[] namespace = utf8(r.scopedKey().namespace());
        byte[] principal = utf8(r.scopedKey().principal());
        byte[] key = utf8(r.scopedKey().key());
        byte[] fingerprint = utf8(r.fingerprint());
        byte[] requestType = r.requestType() == null ? null : utf8(r.requestType());
        byte[] response = r.response() == null ? NONE : r.response();
        int size = 1 + 4 + namespace.length + 4 + principal.length + 4 + key.length + 1 + 4 + fingerprint.length
                + 4 + (requestType == null ? 0 : requestType.length) + 4 + 8 * 5 + 4 + response.length + MAC_LENGTH;
        ByteBuffer out = ByteBuffer.allocate(size);
        out.put(VERSION);
        put(out, namespace);
        put(out, principal);
        put(out, key);
        out.put((byte) r.status().ordinal());
        put(out, fingerprint);
        if (requestType == null) {
            out.putInt(-1);
        } else {
            put(out, requestType);
        }
        out.putInt(r.attempts());
        out.putLong(millis(r.firstSeen()));
        out.putLong(millis(r.lastSeen()));
        out.putLong(millis(r.completedAt()));
        out.putLong(r.expiresAt().toEpochMilli());
        out.putLong(r.version());
        put(out, response);
        if (mac != null) {
            mac.update(out.array(), 0, out.position());
            try {
                mac.doFinal(out.array(), out.position());
            } catch (javax.crypto.ShortBufferException e) {
                throw new IllegalStateException(e);
            }
        }
        return out.array();
    }

    /** Whether {@code bytes} are a record entry of this version (its MAC not checked). */
    static boolean versionOf(byte[] bytes) {
        return bytes.length >= 1 + MAC_LENGTH && bytes[0] == VERSION;
    }

    /** Whether {@code bytes} are a record of this version with a MAC that verifies under {@code mac}'s key. */
    static Check check(byte[] bytes, javax.crypto.Mac mac) {
        if (!versionOf(bytes)) {
            return Check.OTHER;
        }
        int body = bytes.length - MAC_LENGTH;
        mac.update(bytes, 0, body);
        byte[] expected = mac.doFinal();
        return java.security.MessageDigest.isEqual(expected, java.util.Arrays.copyOfRange(bytes, body, bytes.length))
                ? Check.VERIFIED : Check.FORGED;
    }

    /** The record of bytes that {@link #check} verified; {@code null} when they do not decode. */
    static IdempotencyRecord decode(byte[] bytes) {
        try {
            ByteBuffer in = ByteBuffer.wrap(bytes, 0, bytes.length - MAC_LENGTH);
            if (in.get() != VERSION) {
                return null; // written by another version: ask the store
            }
            ScopedKey key = new ScopedKey(string(in), string(in), string(in));
            RecordStatus status = RecordStatus.values()[in.get()];
            String fingerprint = string(in);
            String requestType = string(in);
            int attempts = in.getInt();
            Instant firstSeen = instant(in.getLong());
            Instant lastSeen = instant(in.getLong());
            Instant completedAt = instant(in.getLong());
            Instant expiresAt = Instant.ofEpochMilli(in.getLong());
            long version = in.getLong();
            int n = in.getInt();
            if (n < 0 || n != in.remaining()) {
                return null;
            }
            byte[] response = new byte[n];
            in.get(response);
            return IdempotencyRecord.of(key).status(status).fingerprint(fingerprint).response(response)
                    .requestType(requestType).attempts(attempts).firstSeen(firstSeen).lastSeen(lastSeen)
                    .completedAt(completedAt).expiresAt(expiresAt).version(version).build();
        } catch (RuntimeException e) {
            return null; // not ours, or cut short: ask the store
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void put(ByteBuffer out, byte[] bytes) {
        out.putInt(bytes.length);
        out.put(bytes);
    }

    private static String string(ByteBuffer in) {
        int n = in.getInt();
        if (n < 0) {
            return null;
        }
        String s = new String(in.array(), in.position(), n, StandardCharsets.UTF_8);
        in.position(in.position() + n);
        return s;
    }

    private static long millis(Instant i) {
        return i == null ? Long.MIN_VALUE : i.toEpochMilli();
    }

    private static Instant instant(long millis) {
        return millis == Long.MIN_VALUE ? null : Instant.ofEpochMilli(millis);
    }
}
