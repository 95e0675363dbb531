package dev.idempotency.cache;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Instant;

/**
 * A finished record as cache bytes: a small versioned binary form, so that the replicated cache needs no
 * marshaller configuration (Infinispan carries {@code byte[]} as is) and no Java serialisation.
 */
final class RecordBytes {

    private static final int VERSION = 1;

    private RecordBytes() {
    }

    static byte[] encode(IdempotencyRecord r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128 + (r.response() == null ? 0 : r.response().length));
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeUTF(r.scopedKey().namespace());
            out.writeUTF(r.scopedKey().principal());
            out.writeUTF(r.scopedKey().key());
            out.writeByte(r.status().ordinal());
            out.writeUTF(r.fingerprint());
            out.writeBoolean(r.requestType() != null);
            if (r.requestType() != null) {
                out.writeUTF(r.requestType());
            }
            out.writeInt(r.attempts());
            out.writeLong(millis(r.firstSeen()));
            out.writeLong(millis(r.lastSeen()));
            out.writeLong(millis(r.completedAt()));
            out.writeLong(r.expiresAt().toEpochMilli());
            out.writeLong(r.version());
            byte[] response = r.response() == null ? new byte[0] : r.response();
            out.writeInt(response.length);
            out.write(response);
        } catch (IOException e) {
            throw new IllegalStateException("in-memory stream", e);
        }
        return bytes.toByteArray();
    }

    static IdempotencyRecord decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (in.readUnsignedByte() != VERSION) {
                return null; // written by another version: ask the store
            }
            ScopedKey key = new ScopedKey(in.readUTF(), in.readUTF(), in.readUTF());
            RecordStatus status = RecordStatus.values()[in.readUnsignedByte()];
            String fingerprint = in.readUTF();
            String requestType = in.readBoolean() ? in.readUTF() : null;
            int attempts = in.readInt();
            Instant firstSeen = instant(in.readLong());
            Instant lastSeen = instant(in.readLong());
            Instant completedAt = instant(in.readLong());
            Instant expiresAt = Instant.ofEpochMilli(in.readLong());
            long version = in.readLong();
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            return new IdempotencyRecord(key, status, fingerprint, response, requestType, attempts, firstSeen, lastSeen,
                    completedAt, expiresAt, null, null, version);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long millis(Instant i) {
        return i == null ? Long.MIN_VALUE : i.toEpochMilli();
    }

    private static Instant instant(long millis) {
        return millis == Long.MIN_VALUE ? null : Instant.ofEpochMilli(millis);
    }
}
