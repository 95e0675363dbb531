package dev.idempotency.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Atomic claims over HTTP in a real server, killed: Payara Micro with the example, on its default data source
 * (an H2 file database under {@code --rootDir}, kept across restarts). A payment is SIGKILLed after its row was
 * written and before its commit; after the restart nothing of it is there, and the retry with the same key and
 * body runs it, at once (no lease to wait out), once; the next retry is its replay. Runs in the payara profile
 * only (it starts its own server; not Arquillian).
 */
class HttpCrashIT {

    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    static final Path TARGET = Paths.get("target").toAbsolutePath();
    static final Path ROOT = TARGET.resolve("crash-root");
    static final Pattern READY = Pattern.compile("Payara Micro \\S+ \\(build \\S+\\) ready in ");
    static final String BODY = "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"crash-1\"}";

    Process server;
    int port;
    Path log;
    int starts;

    @Test
    @DisplayName("SIGKILL after the payment row is flushed, before the commit: the retry runs once, at once; then replays")
    void killedBeforeTheCommit() throws Throwable {
        try {
            killAndRetry();
        } catch (Throwable e) {
            if (log != null) {
                System.out.println("HttpCrashIT failed; the tail of " + log + ":\n" + tail(log));
            }
            throw e;
        }
    }

    void killAndRetry() throws Exception {
        deleteRecursively(ROOT);

        // 1. The default data source keeps its data across a restart with the same --rootDir.
        start();
        String warmKey = UUID.randomUUID().toString();
        HttpResponse<byte[]> warm = send(post(warmKey, BODY, 0), 60);
        assertThat(warm.statusCode()).as(text(warm)).isEqualTo(201);
        assertThat(stat("payments")).isEqualTo(1);
        stop();
        start();
        assertThat(stat("payments")).as("the committed payment survived the restart").isEqualTo(1);
        HttpResponse<byte[]> warmAgain = send(post(warmKey, BODY, 0), 60);
        assertThat(warmAgain.statusCode()).isEqualTo(201);
        assertThat(warmAgain.headers().firstValue("Idempotent-Replayed")).as("its key survived too").hasValue("true");
        assertThat(warmAgain.body()).isEqualTo(warm.body());

        // 2. A charge that pauses after its row is written; killed there.
        long before = stat("payments");
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<byte[]>> killed = CLIENT.sendAsync(post(key, BODY, 60_000),
                HttpResponse.BodyHandlers.ofByteArray());
        awaitStat("flushed", 1, 60);
        // Not a synchronisation: H2 writes committed changes to its file up to a second late (its write delay),
        // so a claim committed on its own before the work (a leased claim) would vanish with an immediate kill
        // and this test would pass for the wrong reason. After this hold, anything committed is on disk.
        Thread.sleep(3_000);
        assertThat(killed).as("the paused request is still running").isNotDone();
        kill();
        assertThat(killed).as("the killed request got no answer").satisfies(f -> {
            try {
                f.get(30, TimeUnit.SECONDS);
                fail("the killed request was answered");
            } catch (ExecutionException expected) {
                // its connection was closed by the kill
            }
        });

        // 3. Restarted on the same root: nothing of the killed request; its retry runs, at once, once.
        start();
        assertThat(stat("payments")).as("the killed request's row was never committed").isEqualTo(before);
        long t0 = System.nanoTime();
        HttpResponse<byte[]> retry = send(post(key, BODY, 0), 60);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        System.out.println("HttpCrashIT: the retry after the crash took " + took.toMillis() + " ms");
        assertThat(retry.statusCode()).as(text(retry)).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("the retry ran (not a replay)").isEmpty();
        assertThat(took).as("no lease to wait out (the default lease is 1 minute)").isLessThan(Duration.ofSeconds(30));
        assertThat(stat("charges")).isEqualTo(1);
        assertThat(stat("payments")).isEqualTo(before + 1);

        HttpResponse<byte[]> again = send(post(key, BODY, 0), 60);
        assertThat(again.statusCode()).as(text(again)).isEqualTo(201);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(again.body()).as("the replay's bytes").isEqualTo(retry.body());
        assertThat(again.headers().firstValue("Location")).isEqualTo(retry.headers().firstValue("Location")).isPresent();
        assertThat(stat("charges")).isEqualTo(1);
        assertThat(stat("payments")).isEqualTo(before + 1);
    }

    @AfterEach
    void stopServer() throws Exception {
        if (server != null && server.isAlive()) {
            stop();
        }
    }

    // ------------------------------------------------------------------------------------------- server

    /**
     * Starts Payara Micro with the example on a free port and the same root, and waits until it says it is
     * ready and answers. (On a restart it first loads the application kept in the root, then deploys the WAR
     * again over it: only after "ready in" is the answering application the final one.)
     */
    void start() throws Exception {
        port = freePort();
        log = TARGET.resolve("crash-payara-" + (++starts) + ".log");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx1g", "-jar", property("payara.microJar"),
                "--rootDir", ROOT.toString(), "--nocluster", "--port", String.valueOf(port),
                "--contextroot", "/",
                // the default H2 pool made an XA type, as the example's own run does: the library refuses the example's
                // optimistic endpoint on a pool that cannot share a transaction's connection
                "--postbootcommandfile", Paths.get("src/test/payara/pool.asadmin").toAbsolutePath().toString(),
                "--deploy", property("example.war"));
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        server = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!ready() || status() != 200) {
            if (!server.isAlive()) {
                failWithLog("Payara Micro exited (" + server.exitValue() + ") before it answered");
            }
            if (System.nanoTime() > deadline) {
                failWithLog("Payara Micro did not answer on " + port + " within 180 s");
            }
            Thread.sleep(500);
        }
    }

    /** Payara Micro's last start-up line, "Payara Micro 6.x (build n) ready in n (ms)", is in its log. */
    boolean ready() throws IOException {
        return READY.matcher(Files.readString(log, StandardCharsets.ISO_8859_1)).find();
    }

    /** SIGTERM; Payara Micro shuts down. */
    void stop() throws Exception {
        server.destroy();
        if (!server.waitFor(60, TimeUnit.SECONDS)) {
            server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** SIGKILL. */
    void kill() throws Exception {
        server.destroyForcibly();
        assertThat(server.waitFor(30, TimeUnit.SECONDS)).as("the killed server exited").isTrue();
    }

    void failWithLog(String message) throws IOException {
        fail(message + "; the tail of " + log + ":\n" + tail(log));
    }

    static String tail(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.ISO_8859_1);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    static String property(String name) {
        String value = System.getProperty(name);
        assertThat(value).as("system property " + name + " (set by the payara profile)").isNotBlank();
        return value;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    // --------------------------------------------------------------------------------------------- HTTP

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + "/" + path);
    }

    /** The same key and body each time; the pause is a header, outside the fingerprint. */
    HttpRequest post(String key, String body, long pauseAfterChargeMillis) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("api/payments"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(120));
        if (pauseAfterChargeMillis > 0) {
            b.header("X-Pause-After-Charge", String.valueOf(pauseAfterChargeMillis));
        }
        return b.build();
    }

    static HttpResponse<byte[]> send(HttpRequest request, int seconds) throws Exception {
        return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).get(seconds, TimeUnit.SECONDS);
    }

    static String text(HttpResponse<byte[]> r) {
        return r.statusCode() + " " + r.headers().map() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }

    int status() {
        try {
            return CLIENT.send(HttpRequest.newBuilder(uri("api/payments/stats")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    long stat(String field) throws Exception {
        String json = new String(send(HttpRequest.newBuilder(uri("api/payments/stats")).timeout(Duration.ofSeconds(30)).build(), 30).body(),
                StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertThat(m.find()).as(json).isTrue();
        return Long.parseLong(m.group(1));
    }

    void awaitStat(String field, long value, int seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (stat(field) < value) {
            if (System.nanoTime() > deadline) {
                failWithLog(field + " did not reach " + value + " within " + seconds + " s");
            }
            Thread.sleep(100);
        }
    }
}
