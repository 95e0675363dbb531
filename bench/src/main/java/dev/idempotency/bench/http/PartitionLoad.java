package dev.idempotency.bench.http;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One cell of {@code bench/partition}: load on a cluster of example nodes while a fault is applied and healed.
 * Not JMH: a plain {@code main}, started by the script.
 *
 * <p>{@code --threads} client threads each take a new key (a run's prefix and a UUID), send it 2 to 4 times (at random)
 * one after the other, each sending to a random node of {@code --nodes} and retried (at once, to a random node) on any
 * answer but a 2xx and on a timeout ({@code --timeout} seconds) until a 2xx; then the next key. After
 * {@code --client-warmup} seconds (this JVM's JIT and connections; counted apart) and {@code --before}
 * seconds the {@code --cut} command runs ({@code bash -c}), {@code --fault} seconds later the {@code --heal} command.
 * From the heal on, the load goes on until the cluster answers at full speed again (the keys answered in every
 * {@code --window} seconds at least {@code --full-speed} of the rate before the cut) and every node's readiness
 * ({@code /health/ready}, read every 250 ms) is UP with every node in its view, both for {@code --settle} seconds, at
 * least {@code --after-min} and at most {@code --after-max} seconds; then no new key is taken and the keys under way
 * are finished.
 *
 * <p>Safety, after the load: no 5xx; every key's 2xx answers have the same body; and in the database
 * ({@code --jdbc}, the example's {@code example_payment} table, whose {@code reference} is the key) each answered key
 * has exactly one payment, the one its answers name.
 *
 * <p>Prints the timeline (per second), the cell's summary, and two machine lines for the script: {@code ROW|...} and
 * {@code SAFETY|...}.
 */
public final class PartitionLoad {

    static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");
    static final Pattern STATUS = Pattern.compile("^\\{\\s*\"status\"\\s*:\\s*\"(UP|DOWN)\"");
    static final Pattern MEMBERS = Pattern.compile("\"cache-members\"\\s*:\\s*\"?(\\d+)");

    final List<String> nodes;
    final String path;
    final int threads;
    final int before;
    final int clientWarmup;
    final int fault;
    final int afterMin;
    final int afterMax;
    final int window;
    final double fullSpeed;
    final int settle;
    final int timeout;
    final int giveUp;
    final String cut;
    final String heal;
    final String prefix;
    final String faultLabel;
    final String claim;
    final String authorization;
    final String timelineFile;
    final String jdbc;
    final String dbUser;
    final String dbPassword;
    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    /** Nanos of the start; the cut and the heal, in nanos (0: not yet). */
    final long t0 = System.nanoTime();
    volatile long cutAt;
    volatile long healAt;
    /** No new key is taken after this (nanos); Long.MAX_VALUE until decided. */
    volatile long stopAt = Long.MAX_VALUE;

    // Per second since t0: keys completed, 2xx answers, other answers, timeouts and connection failures.
    static final int MAX_SECONDS = 1200;
    final AtomicInteger[] keysPerSecond = counters();
    final AtomicInteger[] okPerSecond = counters();
    final AtomicInteger[] errorPerSecond = counters();
    final AtomicInteger[] failedPerSecond = counters();
    /**
     * Each node's readiness readings by the time they came (nanos): "UP3" (status and the members it sees), "DOWN3", or
     * "-" (no answer within 5 s). One reader per node, a reading every 250 ms or when the last one came.
     */
    final List<java.util.concurrent.ConcurrentSkipListMap<Long, String>> readiness = new ArrayList<>();

    /** Counts per phase (before, during, after) and category (201, 201-replay, 409, 503, timeout, ...). */
    final Map<String, AtomicLong> categories = new ConcurrentHashMap<>();
    final Map<String, String> firstBodies = new ConcurrentHashMap<>(); // category -> a sample body
    final Map<String, AtomicLong> okByNode = new ConcurrentHashMap<>(); // "phase node" -> 2xx answers
    /** Every answered key's first 2xx body's payment id; keys whose answers differed. */
    final Map<String, String> answered = new ConcurrentHashMap<>();
    final Map<String, String> differing = new ConcurrentHashMap<>();
    final List<String> unanswered = java.util.Collections.synchronizedList(new ArrayList<>());
    /** The slowest sending (first attempt to its 2xx, retries included), and the slowest single attempt, in nanos. */
    final AtomicLong slowestSend = new AtomicLong();
    final AtomicLong slowestSendStart = new AtomicLong();
    final AtomicLong slowestAttempt = new AtomicLong();
    final AtomicLong slowestAttemptStart = new AtomicLong();
    final AtomicLong keysTaken = new AtomicLong();

    PartitionLoad(Map<String, String> o) {
        nodes = List.of(o.getOrDefault("nodes", "http://localhost:8080").split(","));
        path = o.getOrDefault("path", "/api/payments");
        threads = Integer.parseInt(o.getOrDefault("threads", "16"));
        before = Integer.parseInt(o.getOrDefault("before", "10"));
        clientWarmup = Integer.parseInt(o.getOrDefault("client-warmup", "0"));
        fault = Integer.parseInt(o.getOrDefault("fault", "0"));
        afterMin = Integer.parseInt(o.getOrDefault("after-min", "10"));
        afterMax = Integer.parseInt(o.getOrDefault("after-max", "60"));
        window = Integer.parseInt(o.getOrDefault("window", "3"));
        fullSpeed = Double.parseDouble(o.getOrDefault("full-speed", "0.8"));
        settle = Integer.parseInt(o.getOrDefault("settle", "10"));
        timeout = Integer.parseInt(o.getOrDefault("timeout", "30"));
        giveUp = Integer.parseInt(o.getOrDefault("give-up", "150"));
        cut = o.get("cut");
        heal = o.get("heal");
        prefix = o.getOrDefault("prefix", "partition-") ;
        faultLabel = o.getOrDefault("label-fault", "-");
        claim = o.getOrDefault("label-claim", "-");
        String credentials = o.getOrDefault("user", "alice:alice-pw");
        authorization = "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
        timelineFile = o.get("timeline");
        jdbc = o.get("jdbc");
        dbUser = o.getOrDefault("db-user", "postgres");
        dbPassword = o.getOrDefault("db-password", "postgres");
    }

    static AtomicInteger[] counters() {
        AtomicInteger[] a = new AtomicInteger[MAX_SECONDS];
        for (int i = 0; i < a.length; i++) {
            a[i] = new AtomicInteger();
        }
        return a;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                System.err.println("bad argument " + args[i]);
                System.exit(2);
            }
            options.put(args[i].substring(2), args[++i]);
        }
        int status = new PartitionLoad(options).run();
        System.exit(status);
    }

    int second(long nanos) {
        return (int) Math.min(MAX_SECONDS - 1, Math.max(0, TimeUnit.NANOSECONDS.toSeconds(nanos - t0)));
    }

    String phase(long nanos) {
        long c = cutAt;
        long h = healAt;
        if (nanos - t0 < TimeUnit.SECONDS.toNanos(clientWarmup)) {
            return "warm-up";
        }
        if (c == 0 || nanos < c) {
            return "before";
        }
        return h == 0 || nanos < h ? "during" : "after";
    }

    int run() throws Exception {
        System.out.printf(Locale.ROOT, "# cell %s/%s: %d threads on %s%s, %d s of load to warm the client up, %d s before the cut,"
                + " %d s cut, after the heal %d to %d s; key prefix %s%n", faultLabel, claim, threads, nodes, path, clientWarmup, before,
                fault, afterMin, afterMax, prefix);
        for (int i = 0; i < nodes.size(); i++) {
            readiness.add(new java.util.concurrent.ConcurrentSkipListMap<>());
            int node = i;
            Thread poller = new Thread(() -> pollReadiness(node), "readiness-" + i);
            poller.setDaemon(true);
            poller.start();
        }
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(this::work, "client-" + i);
            workers.add(t);
            t.start();
        }
        sleepUntil(t0 + TimeUnit.SECONDS.toNanos(clientWarmup + before));
        if (fault > 0) {
            cutAt = System.nanoTime();
            System.out.printf(Locale.ROOT, "MARK|cut|%d%n", System.currentTimeMillis());
            command(cut);
            sleepUntil(cutAt + TimeUnit.SECONDS.toNanos(fault));
            healAt = System.nanoTime();
            System.out.printf(Locale.ROOT, "MARK|heal|%d%n", System.currentTimeMillis());
            command(heal);
            // From the heal on: until full speed and whole views, within the bounds.
            long min = healAt + TimeUnit.SECONDS.toNanos(afterMin);
            long max = healAt + TimeUnit.SECONDS.toNanos(afterMax);
            while (System.nanoTime() < max) {
                long whole = wholeAfter(healAt);
                if (System.nanoTime() >= min && fullSpeedAfter(healAt) >= 0 && whole >= 0
                        && System.nanoTime() - healAt - TimeUnit.MILLISECONDS.toNanos(whole) >= TimeUnit.SECONDS.toNanos(settle)) {
                    break;
                }
                Thread.sleep(250);
            }
        }
        stopAt = System.nanoTime();
        System.out.printf(Locale.ROOT, "MARK|stop|%d%n", System.currentTimeMillis());
        for (Thread t : workers) {
            t.join();
        }
        long end = System.nanoTime();
        report(end);
        return 0;
    }

    /** Runs a fault's command; a command that fails ends the run (the cut would not be what it says). */
    static void command(String command) throws IOException, InterruptedException {
        if (command == null || command.isBlank()) {
            return;
        }
        Process p = new ProcessBuilder("bash", "-c", command).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("the command failed (" + p.exitValue() + "): " + command);
        }
    }

    void work() {
        while (System.nanoTime() < stopAt) {
            String key = prefix + UUID.randomUUID();
            keysTaken.incrementAndGet();
            int times = 2 + ThreadLocalRandom.current().nextInt(3);
            boolean done = true;
            for (int i = 0; i < times && done; i++) {
                done = sendUntil2xx(key);
            }
            if (done) {
                keysPerSecond[second(System.nanoTime())].incrementAndGet();
            } else {
                unanswered.add(key);
            }
        }
    }

    /** Sends the key until a 2xx (true) or for longer than the give-up (false). */
    boolean sendUntil2xx(String key) {
        String body = "{\"amount\":1250,\"currency\":\"EUR\",\"reference\":\"" + key + "\"}";
        long start = System.nanoTime();
        long giveUpAt = start + TimeUnit.SECONDS.toNanos(giveUp);
        while (System.nanoTime() < giveUpAt) {
            String node = nodes.get(ThreadLocalRandom.current().nextInt(nodes.size()));
            HttpRequest request = HttpRequest.newBuilder(URI.create(node + path))
                    .timeout(Duration.ofSeconds(timeout))
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", key)
                    .header("Authorization", authorization)
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build();
            long attempt = System.nanoTime();
            String category;
            HttpResponse<String> response = null;
            try {
                response = client.send(request, HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                category = status / 100 == 2 && response.headers().firstValue("Idempotent-Replayed").isPresent()
                        ? status + "-replay" : String.valueOf(status);
            } catch (java.net.http.HttpTimeoutException e) {
                category = "timeout";
            } catch (IOException e) {
                category = e.getClass().getSimpleName();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            long now = System.nanoTime();
            max(slowestAttempt, slowestAttemptStart, now - attempt, attempt);
            categories.computeIfAbsent(phase(now) + " " + category, c -> new AtomicLong()).incrementAndGet();
            if (response != null && response.statusCode() / 100 == 2) {
                okPerSecond[second(now)].incrementAndGet();
                okByNode.computeIfAbsent(phase(now) + " " + node.replaceAll("^https?://", ""), n -> new AtomicLong()).incrementAndGet();
                max(slowestSend, slowestSendStart, now - start, start);
                Matcher m = ID.matcher(response.body());
                String id = m.find() ? m.group(1) : response.body();
                String first = answered.putIfAbsent(key, id);
                if (first != null && !first.equals(id)) {
                    differing.put(key, first + " then " + id + " (" + node + ")");
                }
                return true;
            }
            if (response != null) {
                errorPerSecond[second(now)].incrementAndGet();
                String sample = response.body();
                firstBodies.putIfAbsent(category, node + ": " + (sample.length() > 300 ? sample.substring(0, 300) : sample));
            } else {
                failedPerSecond[second(now)].incrementAndGet();
            }
        }
        return false;
    }

    static void max(AtomicLong value, AtomicLong at, long candidate, long when) {
        synchronized (value) {
            if (candidate > value.get()) {
                value.set(candidate);
                at.set(when);
            }
        }
    }

    /** Every 250 ms (or when the last answer came, if later), node {@code i}'s readiness: UP or DOWN and the members it sees. */
    void pollReadiness(int i) {
        HttpClient health = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(nodes.get(i) + "/health/ready"))
                .timeout(Duration.ofSeconds(5)).GET().build();
        while (true) {
            long start = System.nanoTime();
            String state;
            try {
                String body = health.send(request, HttpResponse.BodyHandlers.ofString()).body();
                Matcher st = STATUS.matcher(body);
                Matcher m = MEMBERS.matcher(body);
                state = (st.find() ? st.group(1) : "?") + (m.find() ? m.group(1) : "?");
            } catch (IOException e) {
                state = "-";
            } catch (InterruptedException e) {
                return;
            }
            readiness.get(i).put(System.nanoTime(), state);
            try {
                Thread.sleep(Math.max(0, 250 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Node {@code i}'s readiness at {@code nanos}: its last reading, or "-" when none came in the 6 s before (a reading waits at most 5 s). */
    String readinessAt(int i, long nanos) {
        Map.Entry<Long, String> e = readiness.get(i).floorEntry(nanos);
        return e == null || nanos - e.getKey() > TimeUnit.SECONDS.toNanos(6) ? "-" : e.getValue();
    }

    /**
     * Keys answered per second before the cut, after the client's warm-up (without one, the first second is left out: the
     * threads start in it).
     */
    double rateBefore() {
        int from = Math.max(1, clientWarmup);
        int to = cutAt == 0 ? second(stopAt) : second(cutAt);
        long sum = 0;
        for (int s = from; s < to; s++) {
            sum += keysPerSecond[s].get();
        }
        return to > from ? sum / (double) (to - from) : 0;
    }

    /**
     * Seconds after the heal from which the cluster answered at full speed and stayed so: every {@code window} whole
     * seconds from then on answered at least {@code full-speed} of the keys per second before the cut, for at least
     * {@code settle} seconds (a merge a few seconds after the heal can slow it again); -1: not (yet).
     */
    double fullSpeedAfter(long heal) {
        double target = fullSpeed * rateBefore();
        int first = second(heal) + 1; // the first whole second after the heal
        int last = second(System.nanoTime()) - 1; // whole seconds only
        Integer since = null;
        for (int s = first; s + window - 1 <= last; s++) {
            long sum = 0;
            for (int i = s; i < s + window; i++) {
                sum += keysPerSecond[i].get();
            }
            if (sum < target * window) {
                since = null;
            } else if (since == null) {
                since = s;
            }
        }
        if (since == null || last + 1 - since < settle) {
            return -1;
        }
        return (t0 + TimeUnit.SECONDS.toNanos(since) - heal) / 1e9;
    }

    /**
     * Milliseconds after the heal from which every node's readiness was UP with every node in its view, and stayed so;
     * -1: not yet.
     */
    long wholeAfter(long heal) {
        String[] current = new String[nodes.size()];
        List<long[]> events = new ArrayList<>(); // {time, node}
        for (int i = 0; i < nodes.size(); i++) {
            current[i] = readinessAt(i, heal);
            for (Long t : readiness.get(i).tailMap(heal, false).keySet()) {
                events.add(new long[] {t, i});
            }
        }
        events.sort((a, b) -> Long.compare(a[0] - heal, b[0] - heal));
        String whole = "UP" + nodes.size();
        Long since = java.util.Arrays.stream(current).allMatch(whole::equals) ? heal : null;
        for (long[] e : events) {
            current[(int) e[1]] = readiness.get((int) e[1]).get(e[0]);
            boolean all = java.util.Arrays.stream(current).allMatch(whole::equals);
            if (all && since == null) {
                since = e[0];
            } else if (!all) {
                since = null;
            }
        }
        return since == null ? -1 : TimeUnit.NANOSECONDS.toMillis(since - heal);
    }

    void report(long end) throws Exception {
        // The timeline: per second, keys, 2xx, other answers, failures, and the nodes' readiness at its end.
        StringBuilder timeline = new StringBuilder("second,phase,keys,ok,error_answers,timeouts_or_failures,readiness\n");
        int last = second(end);
        for (int s = 0; s <= last; s++) {
            String[] r = new String[nodes.size()];
            for (int i = 0; i < r.length; i++) {
                r[i] = readinessAt(i, t0 + TimeUnit.SECONDS.toNanos(s + 1)); // at the second's end
            }
            timeline.append(String.format(Locale.ROOT, "%d,%s,%d,%d,%d,%d,%s%n", s,
                    phase(t0 + TimeUnit.SECONDS.toNanos(s)), keysPerSecond[s].get(), okPerSecond[s].get(),
                    errorPerSecond[s].get(), failedPerSecond[s].get(), String.join(" ", r)));
        }
        if (timelineFile != null) {
            Files.writeString(Path.of(timelineFile), timeline);
        }
        System.out.print(timeline.toString().lines().map(l -> "  " + l).reduce("", (a, b) -> a + b + "\n"));

        double rate = rateBefore();
        long during = 0;
        if (cutAt != 0) {
            for (int s = second(cutAt); s < second(healAt); s++) {
                during += keysPerSecond[s].get();
            }
        }
        Map<String, Long> counts = new TreeMap<>();
        categories.forEach((k, v) -> counts.put(k, v.get()));
        System.out.println("  answers by phase: " + counts);
        Map<String, Long> byNode = new TreeMap<>();
        okByNode.forEach((k, v) -> byNode.put(k, v.get()));
        System.out.println("  2xx answers by phase and node: " + byNode);
        firstBodies.forEach((c, b) -> System.out.println("  a " + c + " answer: " + b));
        long fiveHundreds = counts.entrySet().stream().filter(e -> e.getKey().matches("\\S+ 5\\d\\d.*"))
                .mapToLong(Map.Entry::getValue).sum();
        String fiveHundredsByPhase = counts.entrySet().stream().filter(e -> e.getKey().matches("\\S+ 5\\d\\d.*"))
                .map(e -> e.getKey() + " " + e.getValue()).reduce((a, b) -> a + ", " + b).orElse("none");
        String slowest = String.format(Locale.ROOT, "%.1f s", slowestSend.get() / 1e9);
        String slowestWhen = String.format(Locale.ROOT, "sent at %.1f s (%s)", (slowestSendStart.get() - t0) / 1e9,
                phase(slowestSendStart.get()));
        System.out.printf(Locale.ROOT, "  slowest answer (first attempt to its 2xx) %.2f s, %s; slowest single attempt %.2f s"
                + " at %.1f s%n", slowestSend.get() / 1e9, slowestWhen, slowestAttempt.get() / 1e9,
                (slowestAttemptStart.get() - t0) / 1e9);
        String after = "-";
        if (healAt != 0) {
            double speed = fullSpeedAfter(healAt);
            long whole = wholeAfter(healAt);
            String both = speed < 0 || whole < 0 ? "not within " + afterMax + " s"
                    : String.format(Locale.ROOT, "%.1f s", Math.max(speed, whole / 1000.0));
            after = String.format(Locale.ROOT, "%s (full speed %s; views whole and every node ready %s)", both,
                    speed < 0 ? "not within " + afterMax + " s" : String.format(Locale.ROOT, "%.1f s", speed),
                    whole < 0 ? "not within " + afterMax + " s" : String.format(Locale.ROOT, "%.1f s", whole / 1000.0));
        }
        String duringText = cutAt == 0 ? "-" : String.format(Locale.ROOT, "%d keys in %d s (%.1f/s; %.1f/s before)",
                during, fault, during / (double) fault, rate);
        System.out.printf(Locale.ROOT, "  keys answered per second before the cut %.1f; during the cut %s; after the heal: %s%n",
                rate, duringText, after);

        // Safety: the database.
        String db = "not checked";
        long twice = 0;
        long missing = 0;
        long otherId = 0;
        if (jdbc != null) {
            Map<String, List<String>> rows = new HashMap<>();
            try (Connection c = DriverManager.getConnection(jdbc, dbUser, dbPassword);
                    PreparedStatement ps = c.prepareStatement("select reference, id from example_payment where reference like ?")) {
                ps.setString(1, prefix.replace("_", "\\_").replace("%", "\\%") + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                    }
                }
            }
            List<String> examples = new ArrayList<>();
            for (Map.Entry<String, List<String>> e : rows.entrySet()) {
                if (e.getValue().size() > 1) {
                    twice++;
                    if (examples.size() < 5) {
                        examples.add("charged " + e.getValue().size() + " times: " + e.getKey() + " " + e.getValue()
                                + " answered " + answered.get(e.getKey()));
                    }
                }
            }
            for (Map.Entry<String, String> e : answered.entrySet()) {
                List<String> ids = rows.get(e.getKey());
                if (ids == null) {
                    missing++;
                    if (examples.size() < 10) {
                        examples.add("answered, no payment: " + e.getKey() + " " + e.getValue());
                    }
                } else if (!ids.contains(e.getValue())) {
                    otherId++;
                    if (examples.size() < 10) {
                        examples.add("answered with a payment not in the table: " + e.getKey() + " " + e.getValue() + ", rows " + ids);
                    }
                }
            }
            db = String.format(Locale.ROOT, "%d payments for %d keys answered", rows.values().stream().mapToInt(List::size).sum(),
                    answered.size());
            examples.forEach(x -> System.out.println("  " + x));
        }
        differing.entrySet().stream().limit(5).forEach(e -> System.out.println("  two bodies: " + e.getKey() + " " + e.getValue()));
        unanswered.stream().limit(5).forEach(k -> System.out.println("  never answered (given up): " + k));
        System.out.printf(Locale.ROOT, "  safety: %s; charged twice %d; answered without its payment %d; answered with another"
                + " payment %d; keys with two bodies %d; 5xx %d; keys given up %d (of %d taken)%n", db, twice, missing, otherId,
                differing.size(), fiveHundreds, unanswered.size(), keysTaken.get());
        System.out.printf(Locale.ROOT, "ROW|%s|%s|%.1f|%s|%s|%s|%s%n", faultLabel, claim, rate, duringText, slowest, after, slowestWhen);
        System.out.printf(Locale.ROOT, "SAFETY|%s|%s|%d|%d|%d|%d|%d|%d|%d|%s%n", faultLabel, claim, twice, missing, otherId,
                differing.size(), fiveHundreds, unanswered.size(), answered.size(), fiveHundredsByPhase);
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
