package dev.idempotency.quarkus;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application (target/quarkus-app), on the machine's PostgreSQL, killed with SIGKILL after its charge's row
 * was written and before the commit; a new JVM then takes the retry, which charges once (atomic: at once, since the
 * claim died with the transaction; leased: once the dead JVM's lease has ended), and every later retry is replayed.
 */
class QuarkusCrashIT {

    private static final String DATABASE = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final Duration START = Duration.ofSeconds(60);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        started.forEach(Process::destroyForcibly);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/leased-transactional"})
    void aRetryAfterTheJvmWasKilledBeforeTheCommitChargesOnce(String door) throws Exception {
        String ref = "crash-" + UUID.randomUUID();
        Path log1 = Files.createTempFile("quarkus-crash-1-", ".log");
        int port1 = freePort();
        Process first = start(port1, log1);
        http.sendAsync(request(port1, door, ref, 60_000), HttpResponse.BodyHandlers.discarding());
        awaitLine(log1, "CHARGED " + ref, first);
        first.destroyForcibly(); // SIGKILL: the charge's row written, not committed
        assertTrue(first.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "the JVM died");
        assertEquals(0, rows(ref), "nothing of the killed attempt committed");

        Path log2 = Files.createTempFile("quarkus-crash-2-", ".log");
        int port2 = freePort();
        start(port2, log2);
        HttpResponse<String> retried = retryUntilAnswered(port2, door, ref);
        assertEquals(201, retried.statusCode(), retried::body);
        assertEquals(1, rows(ref), "the retry charged once");
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> again = http.send(request(port2, door, ref, 0), HttpResponse.BodyHandlers.ofString());
            assertEquals(retried.body(), again.body(), "a later retry is the retry's answer");
            assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(""));
        }
        assertEquals(1, rows(ref), "one charge in all");
    }

    /** The retry, repeated while the dead JVM's claim is in progress (409, leased: until its lease ends), for 30 s at most. */
    private HttpResponse<String> retryUntilAnswered(int port, String door, String ref) throws Exception {
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            HttpResponse<String> r = http.send(request(port, door, ref, 0), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 409 || Instant.now().isAfter(deadline)) {
                return r;
            }
            long retryAfter = r.headers().firstValue("Retry-After").map(Long::parseLong).orElse(1L);
            Thread.sleep(Math.min(retryAfter, 5) * 1000); // as a client does: the Retry-After the 409 asks for
        }
    }

    private HttpRequest request(int port, String door, String ref, long pauseMillis) {
        String body = "{\"reference\":\"" + ref + "\",\"amount\":42,\"fail\":false}";
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments" + door))
                .header("Content-Type", "application/json").header("Idempotency-Key", ref)
                .header("X-Pause-After-Charge", String.valueOf(pauseMillis))
                .timeout(Duration.ofSeconds(90)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private Process start(int port, Path log) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-Dquarkus.http.port=" + port, "-jar", "target/quarkus-app/quarkus-run.jar")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        started.add(p);
        awaitLine(log, "Listening on", p);
        return p;
    }

    /** Waits until the process's output has the line, failing if it dies or {@link #START} passes. */
    private static void awaitLine(Path log, String line, Process p) throws Exception {
        Instant deadline = Instant.now().plus(START);
        while (!Files.readString(log).contains(line)) {
            if (!p.isAlive()) {
                throw new AssertionError("the application died:\n" + Files.readString(log));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("no \"" + line + "\" in " + START + ":\n" + Files.readString(log));
            }
            Thread.sleep(50); // polling the output for the line
        }
    }

    private static int rows(String ref) throws Exception {
        try (Connection c = DriverManager.getConnection(DATABASE, "postgres", "postgres");
             PreparedStatement q = c.prepareStatement("SELECT COUNT(*) FROM charge WHERE idem_key = ?")) {
            q.setString(1, ref);
            try (ResultSet r = q.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
