package dev.idempotency.it;

import dev.idempotency.testing.PostgresStandbyPair;
import dev.idempotency.testing.PostgresStandbyPair.Replication;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A database failover under HTTP load, in a real server: Payara Micro with the example, its PostgreSQL pool the
 * example's own ({@code example/src/main/payara/postgresql.asadmin}: validation when a connection is handed out, all
 * dropped when one fails) on the driver's multi-host URL ({@code PGURL}, {@code targetServerType=primary}) over a
 * primary and a streaming standby the test makes ({@link PostgresStandbyPair}, ports 5443 and 5444). Clients post
 * payments with fresh keys, each retrying a key until it is answered, as a client of an idempotent API does. Mid-load
 * the primary is killed (SIGKILL, every process) and the standby promoted ten seconds later (a cluster manager's
 * detection time); the load goes on, on the same server, which is not restarted. Then every answered key is posted
 * once more, and the surviving database's payments counted.
 *
 * <p>Synchronous replication by default (the CI run); {@code -Dfailover.replication=ASYNCHRONOUS} holds the primary's
 * WAL sender for its last answers first, so that the promotion loses them, and flushes the cache after the promotion,
 * as the guide says to; {@code -Dfailover.answers=N} sets how many answers come before the kill and after the
 * promotion (the longer runs of {@code bench/failover}). Figures go to {@code target/failover/results.txt}.
 *
 * <p>Runs in the payara profile only (it starts its own server and databases; not Arquillian).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpFailoverIT {

    static final Replication REPLICATION = Replication.valueOf(System.getProperty("failover.replication", "SYNCHRONOUS"));
    static final Path TARGET = Paths.get("target").toAbsolutePath();
    /** The example's pool (postgresql.env's timeouts) on both hosts, the driver connecting to the primary. */
    static final String URL_OPTIONS = "targetServerType=primary&connectTimeout=3&loginTimeout=5&socketTimeout=12";

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    PostgresStandbyPair pair;
    Process server;
    Path log;
    int port;

    @BeforeAll
    void start() throws Exception {
        PostgresStandbyPair.assumeAvailable();
        pair = new PostgresStandbyPair(TARGET.resolve("pg-failover"), 5443);
        pair.start(REPLICATION);
        port = HttpCrashIT.freePort();
        log = TARGET.resolve("failover-payara.log");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Path example = Paths.get("..", "example").toAbsolutePath().normalize();
        // As example/node starts it: the pool's settings from postgresql.env, here a URL naming both servers
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", "source src/main/payara/postgresql.env && exec \"$0\" -Xmx1g -jar \"$1\""
                + " --nocluster --port \"$2\" --contextroot / --addLibs target/postgresql.jar"
                + " --postbootcommandfile src/main/payara/postgresql.asadmin --deploy \"$3\"",
                java, HttpCrashIT.property("payara.microJar"), String.valueOf(port), HttpCrashIT.property("example.war"));
        pb.directory(example.toFile());
        pb.environment().put("PGURL", "jdbc:postgresql://127.0.0.1:" + pair.primaryPort() + ",127.0.0.1:" + pair.standbyPort()
                + "/postgres?" + URL_OPTIONS);
        pb.environment().put("PGUSER", PostgresStandbyPair.USER);
        pb.environment().put("PGPASSWORD", "unused"); // the pair trusts loopback
        pb.environment().put("PG_POOL_SIZE", "16");
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        server = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!Files.readString(log, StandardCharsets.ISO_8859_1).contains(" ready in ") || FailoverUnderLoad.readiness(http, base()) != 200) {
            if (!server.isAlive()) {
                throw new AssertionError("Payara Micro exited (" + server.exitValue() + ") before it answered; the tail of "
                        + log + ":\n" + HttpCrashIT.tail(log));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Payara Micro did not answer on " + port + " within 180 s; the tail of " + log + ":\n" + HttpCrashIT.tail(log));
            }
            Thread.sleep(500);
        }
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null && server.isAlive()) {
            server.destroy();
            if (!server.waitFor(60, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void theExampleOnAMultiHostUrlAnswersEveryClientAcrossAFailoverWithoutARestartAndChargesNoKeyTwice() throws Exception {
        new FailoverUnderLoad("Payara Micro 6", base(), pair, REPLICATION, true, log).run();
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + port + "/");
    }
}
