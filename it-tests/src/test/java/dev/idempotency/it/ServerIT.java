package dev.idempotency.it;

import dev.idempotency.example.ItConfigured;
import dev.idempotency.example.ItLedger;
import dev.idempotency.example.ItResource;
import dev.idempotency.example.ItTransfers;

import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Base of the in-server tests: the deployment is the payments example's WAR, as built, plus test beans. The
 * tests are clients over HTTP, the same on every server.
 */
@ExtendWith(ArquillianExtension.class)
abstract class ServerIT {

    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** The example's WAR, as built, with the test beans and a microprofile-config.properties. */
    static WebArchive exampleWithTestBeans() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, new File(System.getProperty("example.war")))
                .addClasses(ItLedger.class, ItTransfers.class, ItConfigured.class, ItResource.class, ItResource.Counts.class)
                .addAsResource("it-microprofile-config.properties", "META-INF/microprofile-config.properties");
    }

    /** Waits, bounded, until the condition holds (messages are consumed asynchronously). */
    static void await(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out waiting until " + what);
            }
            Thread.sleep(100);
        }
    }

    @ArquillianResource
    URL base;

    URI uri(String path) {
        return URI.create(base.toString().endsWith("/") ? base + path : base + "/" + path);
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60));
    }

    HttpRequest.Builder postJson(String path, String key, String json) {
        HttpRequest.Builder b = request(path).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8));
    }

    /** A number field of a flat JSON object. */
    static long number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*(-?\\d+)").matcher(json);
        if (!m.find()) {
            throw new AssertionError("no " + field + " in " + json);
        }
        return Long.parseLong(m.group(1));
    }

    long stat(String field) throws Exception {
        return number(send(request("api/payments/stats")).body(), field);
    }

    long count(String field) throws Exception {
        return number(send(request("api/it/counts")).body(), field);
    }
}
