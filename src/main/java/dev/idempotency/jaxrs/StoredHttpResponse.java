package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyException;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An HTTP response as stored: status, the replayable headers, the body bytes, and whether the body was left
 * out for being over the size cap. Encoded as a small versioned binary form.
 */
record StoredHttpResponse(int status, List<Map.Entry<String, String>> headers, byte[] body, boolean bodyOmitted) {

    private static final int VERSION = 1;
    /**
     * The largest stored form: the record's response column on H2 and Derby, and MariaDB's default
     * {@code max_allowed_packet} (16 MiB).
     */
    static final int MAX_STORED_BYTES = 16 * 1024 * 1024;
    /** The longest header name or value the stored form holds (a length of two bytes, modified UTF-8). */
    static final int MAX_HEADER_BYTES = 65_535;
    private static final byte[] EMPTY = new byte[0];

    /**
     * The response as it can be stored. When a replayable header does not fit the stored form (a name or value
     * over {@value #MAX_HEADER_BYTES} bytes), or the headers and the body together are over
     * {@link #MAX_STORED_BYTES}, it is stored as a body over the size cap is: without its body (flagged), with
     * the headers that fit. The response still goes out whole; the operation is never run twice.
     */
    static StoredHttpResponse storable(int status, List<Map.Entry<String, String>> headers, byte[] body, boolean bodyOmitted) {
        long size = 1 + 2 + 1 + 2 + 4;
        List<Map.Entry<String, String>> fitting = new ArrayList<>(headers.size());
        for (Map.Entry<String, String> h : headers) {
            long name = utfLength(h.getKey());
            long value = utfLength(h.getValue());
            if (name <= MAX_HEADER_BYTES && value <= MAX_HEADER_BYTES && fitting.size() < 0xFFFF
                    && size + 4 + name + value <= MAX_STORED_BYTES) {
                fitting.add(h);
                size += 4 + name + value;
            }
        }
        if (fitting.size() == headers.size() && size + body.length <= MAX_STORED_BYTES) {
            return new StoredHttpResponse(status, headers, body, bodyOmitted);
        }
        return new StoredHttpResponse(status, List.copyOf(fitting), EMPTY, true);
    }

    /** The length of {@code s} in the modified UTF-8 of {@link DataOutputStream#writeUTF}. */
    private static long utfLength(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            n += c >= 0x0001 && c <= 0x007F ? 1 : c <= 0x07FF ? 2 : 3;
        }
        return n;
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(body.length + 64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeShort(status);
            out.writeBoolean(bodyOmitted);
            out.writeShort(headers.size());
            for (Map.Entry<String, String> h : headers) {
                out.writeUTF(h.getKey());
                out.writeUTF(h.getValue());
            }
            out.writeInt(body.length);
            out.write(body);
        } catch (IOException e) {
            throw new IllegalStateException("in-memory stream", e);
        }
        return bytes.toByteArray();
    }

    /**
     * The response of its stored form.
     *
     * @throws IdempotencyException when the bytes are not a stored response of this version (unknown version, cut
     *                              short, or a length that does not match what follows)
     */
    static StoredHttpResponse decode(byte[] stored) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(stored))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IdempotencyException("Stored HTTP response of unknown format version " + version);
            }
            int status = in.readUnsignedShort();
            boolean omitted = in.readBoolean();
            int n = in.readUnsignedShort();
            List<Map.Entry<String, String>> headers = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                headers.add(Map.entry(in.readUTF(), in.readUTF()));
            }
            int length = in.readInt();
            if (length < 0 || length > in.available()) {
                // checked before the array is made: a corrupt length is neither a NegativeArraySizeException nor an
                // allocation of up to 2 GiB (an OutOfMemoryError)
                throw new IdempotencyException("A stored HTTP response could not be read: its body length " + length
                        + " is not that of the " + in.available() + " bytes left");
            }
            byte[] body = new byte[length];
            in.readFully(body);
            return new StoredHttpResponse(status, List.copyOf(headers), body, omitted);
        } catch (IOException e) {
            throw new IdempotencyException("A stored HTTP response could not be read", e);
        }
    }
}
