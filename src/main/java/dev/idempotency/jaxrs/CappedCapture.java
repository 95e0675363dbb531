package dev.idempotency.jaxrs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Holds what the message body writer writes, up to a cap, so that the response can be stored before it is
 * sent. Past the cap it gives up holding the body: it first settles the response without its body
 * ({@code beforeSend}: kept, and the work's transaction committed, or refused), and only then sends what it holds and
 * passes the rest straight through; so nothing reaches the client before the answer is decided.
 */
final class CappedCapture extends OutputStream {

    /** What runs once, when the body outgrows the cap, before any of it is sent. */
    interface BeforeSend {
        void run() throws IOException;
    }

    private final OutputStream target;
    private final long cap;
    private final BeforeSend beforeSend;
    private ByteArrayOutputStream held = new ByteArrayOutputStream(512);
    private boolean overflowed;
    private boolean settled;
    private RuntimeException refused;

    CappedCapture(OutputStream target, long cap, BeforeSend beforeSend) {
        this.target = target;
        this.cap = cap;
        this.beforeSend = beforeSend;
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
            if (settled) {
                throw new IOException("The response was not kept; nothing of it is sent");
            }
            settled = true;
            try {
                beforeSend.run();
            } catch (RuntimeException e) {
                refused = e; // the answer to send instead; nothing of this one went out
                throw e;
            }
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

    /** Whether the body outgrew the cap and was settled and sent as it was written. */
    boolean overflowed() {
        return overflowed;
    }

    /** Whether the response was settled here (past the cap), kept or not: the claim is no longer the writer's to give up. */
    boolean settled() {
        return settled;
    }

    /** What the settling answered instead of this response (a problem), or {@code null}. */
    RuntimeException refused() {
        return refused;
    }

    byte[] held() {
        return held.toByteArray();
    }
}
