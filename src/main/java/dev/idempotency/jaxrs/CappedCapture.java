package dev.idempotency.jaxrs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Holds what the message body writer writes, up to a cap, so that the response can be stored before it is
 * sent. Past the cap it gives up storing: it sends what it holds and passes the rest straight through.
 */
final class CappedCapture extends OutputStream {

    private final OutputStream target;
    private final long cap;
    private ByteArrayOutputStream held = new ByteArrayOutputStream(512);
    private boolean overflowed;

    CappedCapture(OutputStream target, long cap) {
        this.target = target;
        this.cap = cap;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        if (overflowed) {
            target.write(b, off, len);
            return;
        }
        if (held.size() + (long) len > cap) {
            overflowed = true;
            held.writeTo(target);
            held = null;
            target.write(b, off, len);
            return;
        }
        held.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        if (overflowed) {
            target.flush();
        }
    }

    @Override
    public void close() {
        // The container closes the real stream; the held bytes are sent by the interceptor.
    }

    boolean overflowed() {
        return overflowed;
    }

    byte[] held() {
        return held.toByteArray();
    }
}
