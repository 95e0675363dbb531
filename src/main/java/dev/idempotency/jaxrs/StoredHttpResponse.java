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
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            return new StoredHttpResponse(status, List.copyOf(headers), body, omitted);
        } catch (IOException e) {
            throw new IdempotencyException("A stored HTTP response could not be read", e);
        }
    }
}
