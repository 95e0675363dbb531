package dev.idempotency.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What the in-server consumers wrote and how often they ran, read over HTTP from the test application. */
final class ConsumerResults {

    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private ConsumerResults() {
    }

    static boolean liberty() {
        return System.getProperty("arquillian.launch", "").startsWith("liberty");
    }

    static String resource(String name) {
        try (InputStream in = KafkaIT.class.getClassLoader().getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }


    static String base(String context) {
        int port = liberty() ? 9080 : 8080;
        return "http://127.0.0.1:" + port + "/" + context + "/api/it/kafka/";
    }


    /** A consumer's payments: key to [rows, runs]. */
    static Map<String, List<Long>> rows(String base, String owner) throws Exception {
        String body = get(base + owner);
        Map<String, List<Long>> rows = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (!line.isBlank()) {
                String[] f = line.trim().split(" ");
                rows.put(f[0], List.of(Long.parseLong(f[1]), Long.parseLong(f[2])));
            }
        }
        return rows;
    }


    static long runs(String base, String owner, String key) throws Exception {
        return Long.parseLong(get(base + owner + "/" + key + "/runs").trim());
    }


    static String get(String url) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(url + ": " + r.body()).isEqualTo(200);
        return r.body();
    }


    static void await(String what, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out waiting until " + what);
            }
            Thread.sleep(200);
        }
    }
}
