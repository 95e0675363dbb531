package dev.idempotency.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A protected request's body is read up to the method's {@code maxRequestSize} and no further: a larger one is answered
 * {@code 413} problem {@code request-too-large}, nothing runs and nothing is kept (the same key with a smaller body
 * runs). The cap comes from the annotation, {@code idempotency.max-request-size} or the per-method override.
 */
class HttpRequestSizeTest extends OneServerTest {

    @BeforeAll
    static void start() throws Exception {
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.max-request-size", "2048");
        config.put(SizedResource.class.getName() + "/overridden/Idempotent/maxRequestSize", "100");
        server = HttpTestServer.onH2(config, SizedResource.class, InflatingRequestFilter.class);
    }

    static byte[] bytes(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    HttpResponse<String> post(String path, String key, byte[] body) throws Exception {
        HttpRequest.Builder b = server.request(path).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        return server.send((key == null ? b : b.header("Idempotency-Key", key)).build());
    }

    /** The same body with no Content-Length: the JDK client sends a body of unknown length chunked. */
    HttpResponse<String> postChunked(String path, String key, byte[] body) throws Exception {
        return server.send(server.request(path).header("Content-Type", "application/octet-stream").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))).build());
    }

    static void assertTooLarge(HttpResponse<String> r, long cap) {
        HttpIdempotencyTest.assertProblem(r, 413, "request-too-large");
        assertThat(r.body()).contains("at most " + cap + " bytes");
    }

    @Test
    @DisplayName("a body of exactly the cap runs; one byte more is 413 problem+json, nothing runs, and the key stays new")
    void capFromTheAnnotation() throws Exception {
        String key = UUID.randomUUID().toString();
        assertTooLarge(post("sized", key, bytes(1025)), 1024);
        assertThat(Counters.executions).hasValue(0);
        assertThat(post("sized", key, bytes(1024)).body()).isEqualTo("run 1, read 1024");
        HttpResponse<String> replay = post("sized", key, bytes(1024));
        assertThat(replay.body()).isEqualTo("run 1, read 1024");
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    }

    @Test
    @DisplayName("a chunked body (no Content-Length) over the cap: 413, nothing runs; under it: runs with the whole body")
    void chunkedBodies() throws Exception {
        String key = UUID.randomUUID().toString();
        assertTooLarge(postChunked("sized", key, bytes(50_000)), 1024);
        assertThat(Counters.executions).hasValue(0);
        assertThat(postChunked("sized", key, bytes(1000)).body()).isEqualTo("run 1, read 1000");
    }

    static byte[] gzip(byte[] body) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(out)) {
            z.write(body);
        }
        return out.toByteArray();
    }

    @Test
    @DisplayName("a body an application's filter inflates past its Content-Length: read whole up to the cap, 413 past it")
    void aBodyLongerThanItsContentLength() throws Exception {
        byte[] atTheCap = gzip(bytes(1024));
        byte[] overTheCap = gzip(bytes(1025));
        assertThat(atTheCap.length).as("compressed: a declared length far under the cap").isLessThan(100);
        String key = UUID.randomUUID().toString();
        HttpResponse<String> tooLarge = server.send(server.request("sized").header("Content-Type", "application/octet-stream")
                .header("Content-Encoding", "gzip").header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofByteArray(overTheCap)).build());
        assertTooLarge(tooLarge, 1024);
        assertThat(Counters.executions).hasValue(0);
        HttpResponse<String> ran = server.send(server.request("sized").header("Content-Type", "application/octet-stream")
                .header("Content-Encoding", "gzip").header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofByteArray(atTheCap)).build());
        assertThat(ran.body()).as("the whole inflated body, not its declared length").isEqualTo("run 1, read 1024");
    }

    @Test
    @DisplayName("idempotency.max-request-size is the cap of a method that sets none; the per-method override wins over the annotation")
    void globalAndOverride() throws Exception {
        assertTooLarge(post("sized/global", UUID.randomUUID().toString(), bytes(2049)), 2048);
        assertThat(post("sized/global", UUID.randomUUID().toString(), bytes(2048)).body()).isEqualTo("run 1, read 2048");
        assertTooLarge(post("sized/overridden", UUID.randomUUID().toString(), bytes(101)), 100);
        assertThat(post("sized/overridden", UUID.randomUUID().toString(), bytes(100)).body()).isEqualTo("run 2, read 100");
    }

    @Test
    @DisplayName("a key in the body: a body over the cap is 413 before it is parsed")
    void keyFromTheBody() throws Exception {
        byte[] big = ("{\"id\":\"" + UUID.randomUUID() + "\",\"pad\":\"" + "x".repeat(2000) + "\"}").getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> r = server.send(server.request("sized/body-key").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(big)).build());
        assertTooLarge(r, 1024);
        assertThat(Counters.executions).hasValue(0);
    }

    @Test
    @DisplayName("an unprotected request or one without a key: the library reads nothing and adds no cap")
    void noCapWithoutAKey() throws Exception {
        assertThat(post("sized/plain", null, bytes(100_000)).body()).isEqualTo("run 1, read 100000");
    }

    @Test
    @DisplayName("a Content-Length of 10 GiB is answered 413 before its body is sent, nothing runs")
    void declaredHugeBodyIsAnsweredAtOnce() throws Exception {
        String head = "POST /sized HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                + "Content-Type: application/octet-stream\r\nContent-Length: " + (10L << 30) + "\r\n"
                + "Idempotency-Key: " + UUID.randomUUID() + "\r\n\r\n";
        assertThat(rawExchange(head, bytes(10)))
                .startsWith("HTTP/1.1 413").contains("application/problem+json").contains("request-too-large");
        assertThat(Counters.executions).hasValue(0);
    }

    @Test
    @DisplayName("a chunked body of 64 MiB is answered 413 once the cap is passed; the server stops reading a few MiB later")
    void hugeChunkedBodyIsCutAtTheCap() throws Exception {
        String head = "POST /sized HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                + "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n"
                + "Idempotency-Key: " + UUID.randomUUID() + "\r\n\r\n";
        java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
        long total = 64L << 20;
        try (Socket socket = new Socket(server.base.getHost(), server.base.getPort())) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            Thread sender = new Thread(() -> {
                byte[] chunk = bytes(64 * 1024);
                byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                try {
                    while (sent.get() < total) {
                        out.write(size);
                        out.write(chunk);
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                        sent.addAndGet(chunk.length);
                    }
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                } catch (java.io.IOException e) {
                    // the server stopped reading and closed the connection: what a client of a refused body meets
                }
            });
            sender.start();
            String answer = readHead(socket.getInputStream());
            long sentWhenAnswered = sent.get();
            assertThat(answer).startsWith("HTTP/1.1 413").contains("application/problem+json").contains("request-too-large");
            assertThat(sentWhenAnswered).as("bytes sent when the 413 arrived").isLessThan(total / 2);
            socket.close();
            sender.join(30_000);
        }
        assertThat(Counters.executions).hasValue(0);
    }

    /** Sends the head and the start of a body, does not finish the body, and reads the answer. */
    private static String rawExchange(String head, byte[] bodyStart) throws Exception {
        try (Socket socket = new Socket(server.base.getHost(), server.base.getPort())) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(bodyStart);
            out.flush();
            InputStream in = socket.getInputStream();
            return readHead(in);
        }
    }

    /** The status line, the headers and what of the body has arrived with them (the connection may stay open). */
    private static String readHead(InputStream in) throws Exception {
        StringBuilder s = new StringBuilder();
        byte[] buffer = new byte[4096];
        int n;
        while ((n = in.read(buffer)) > 0) {
            s.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
            if (s.indexOf("request-too-large") >= 0 || s.indexOf("\r\n\r\n") >= 0 && !s.toString().startsWith("HTTP/1.1 413")) {
                break;
            }
        }
        return s.toString();
    }
}
