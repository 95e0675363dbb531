package dev.idempotency.bench.http;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A closed-loop HTTP load driver against the example application: {@code POST /api/payments}
 * ({@code @Idempotent}) beside its unprotected twin {@code POST /api/payments/unprotected}, with the same
 * request stream. Not JMH: a plain {@code main}, see BENCHMARKS.md and {@code bench/http-load}.
 *
 * <p>Workloads: {@code unique} (a fresh key per request), {@code retries50} (every key sent twice in a row
 * by the same thread: half the requests are retries), {@code retries} (each thread cycles through 16 keys of its
 * own: after their first sending, in the warm-up, every request is a retry; the unprotected twin runs each one
 * afresh, which is the comparison the target asks for) and {@code burst} ({@code --burst} concurrent requests
 * with one key, then the next key). Each of {@code --threads} threads sends its next request when the
 * previous answer arrived; after {@code --warmup} seconds the requests that start and end within the next
 * {@code --seconds} are measured. After each run the example's {@code /api/payments/stats} is read and the
 * charges that ran are checked against the keys that got a {@code 201}.
 *
 * <p>{@code --slices K} (with more than one endpoint): each endpoint is first warmed up {@code --warmup} seconds,
 * unmeasured; then its {@code --seconds} are measured in {@code K} slices, the endpoints taking turns (A B C D, then
 * B C D A, ...), each slice after {@code --slice-warmup} seconds. On a machine whose speed drifts by a fifth within
 * minutes (a shared host), endpoints measured one after the other are measured on different machines; taking turns,
 * every endpoint meets the same drift.
 */
public final class HttpLoad {

    static final String REPLAYED = "Idempotent-Replayed";
    static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(120);
    static final Pattern STAT = Pattern.compile("\"(charges|payments)\"\\s*:\\s*(\\d+)");

    final String base;
    final int threads;
    final int seconds;
    final int warmup;
    final int slices;
    final int sliceWarmup;
    final int burst;
    final long serverPid;       // 0: no CPU accounting
    final String databaseProcess; // the database's process name (postgres, mariadbd), or none (H2 runs in the server)
    final String user;          // who the requests are sent as, for the header line
    final String authorization; // null: anonymous
    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    HttpLoad(Map<String, String> options) {
        base = options.getOrDefault("base", "http://localhost:8080").replaceAll("/+$", "");
        threads = Integer.parseInt(options.getOrDefault("threads", "8"));
        seconds = Integer.parseInt(options.getOrDefault("seconds", "20"));
        warmup = Integer.parseInt(options.getOrDefault("warmup", "10"));
        slices = Integer.parseInt(options.getOrDefault("slices", "1"));
        sliceWarmup = Integer.parseInt(options.getOrDefault("slice-warmup", "1"));
        if (slices < 1 || seconds % slices != 0) {
            usage("--seconds must be a multiple of --slices");
        }
        burst = Integer.parseInt(options.getOrDefault("burst", "8"));
        serverPid = Long.parseLong(options.getOrDefault("server-pid", "0"));
        databaseProcess = options.getOrDefault("database-process", "none");
        // The example's demo users (Users.java); keys are per user. "anonymous" sends no credentials.
        String credentials = options.getOrDefault("user", "alice:alice-pw");
        user = credentials.split(":")[0];
        authorization = credentials.equals("anonymous") ? null
                : "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        String workload = options.getOrDefault("workload", "unique");
        String endpoint = options.getOrDefault("endpoint", "both");
        if (!List.of("unique", "retries50", "retries", "burst").contains(workload)
                || !List.of("protected", "optimistic", "by-hand", "unprotected", "both", "all").contains(endpoint)) {
            usage("unknown --workload or --endpoint");
        }
        HttpLoad load = new HttpLoad(options);
        System.out.printf(Locale.ROOT, "# %s, workload %s, %d threads, warm-up %d s, measured %d s%s%s, as %s%n",
                load.base, workload, load.threads, load.warmup, load.seconds,
                load.slices == 1 ? "" : String.format(Locale.ROOT, " in %d turns of %d s each (%d s warm-up before each)",
                        load.slices, load.seconds / load.slices, load.sliceWarmup),
                workload.equals("burst") ? ", burst " + load.burst : "", load.user);
        List<Result> results = new ArrayList<>();
        List<String> endpoints = switch (endpoint) {
            case "both" -> List.of("protected", "unprotected");
            case "all" -> List.of("protected", "optimistic", "by-hand", "unprotected");
            default -> List.of(endpoint);
        };
        for (String e : endpoints) {
            results.add(new Result(e, workload));
        }
        if (load.slices > 1) {
            // Taking turns, every endpoint first gets its warm-up, unmeasured: this client's JVM is new too, and its JIT
            // would otherwise slow the first turn of each (measured 20 to 30 % below the next ones, 2026-11-26).
            for (Result r : results) {
                load.slice(new Result(r.endpoint, workload), load.warmup, 0);
            }
        }
        // Turn t: the endpoints from the t-th on, then the ones before it (with one slice: each endpoint once, in order).
        for (int t = 0; t < load.slices; t++) {
            for (int i = 0; i < results.size(); i++) {
                load.slice(results.get((t + i) % results.size()), load.slices > 1 ? load.sliceWarmup : load.warmup,
                        load.seconds / load.slices);
            }
        }
        for (Result r : results) {
            load.report(r);
        }
        String csv = options.get("csv");
        if (csv != null) {
            // One row per endpoint (bench/charts.py draws them): its throughput in requests per second.
            StringBuilder rows = new StringBuilder("label,value,error\n");
            for (Result r : results) {
                rows.append(r.endpoint).append(',').append(String.format(Locale.ROOT, "%.1f", r.throughput)).append(",0\n");
            }
            java.nio.file.Files.writeString(java.nio.file.Path.of(csv), rows);
            if (results.stream().allMatch(r -> r.cpu != null)) {
                // Beside it, the CPU per request: endpoint, server us, database us (empty when the database runs in the server).
                StringBuilder cpuRows = new StringBuilder("endpoint,server_us,database_us\n");
                for (Result r : results) {
                    cpuRows.append(r.endpoint).append(',').append(String.format(Locale.ROOT, "%.0f", r.cpu[0])).append(',')
                            .append(load.databaseProcess.equals("none") ? ""
                                    : String.format(Locale.ROOT, "%.0f", r.cpu[1])).append('\n');
                }
                java.nio.file.Files.writeString(java.nio.file.Path.of(csv.replaceAll("\\.csv$", "") + "-cpu.csv"), cpuRows);
            }
        }
        Result unprotected = results.stream().filter(r -> r.endpoint.equals("unprotected")).findFirst().orElse(null);
        Result byHand = results.stream().filter(r -> r.endpoint.equals("by-hand")).findFirst().orElse(null);
        for (Result r : results) {
            if (unprotected != null && r != unprotected) {
                compare(r, unprotected);
            }
            if (byHand != null && r != byHand && r != unprotected) {
                System.out.printf(Locale.ROOT, "  %s/by-hand throughput: %.2fx%n", r.endpoint, r.throughput / byHand.throughput);
            }
        }
        // The client's selector and executor threads are not daemons before Java 21's close().
        System.exit(0);
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                usage("bad argument " + args[i]);
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }

    static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: HttpLoad [--base http://localhost:8080] [--threads 8] [--seconds 20] [--warmup 10]"
                + " [--workload unique|retries50|retries|burst] [--endpoint protected|optimistic|by-hand|unprotected|both|all] [--burst 8]"
                + " [--slices 1 [--slice-warmup 1]]"
                + " [--user alice:alice-pw|anonymous] [--csv results.csv]"
                + " [--server-pid PID [--database-process postgres|mariadbd|none]]");
        System.exit(2);
    }

    /**
     * One slice of an endpoint's run: warm-up, measurement (none: a warm-up alone), the server's stats and CPU; added to
     * its result.
     */
    void slice(Result r, int warmupSeconds, int measured) throws Exception {
        URI uri = URI.create(base + (r.endpoint.equals("protected") ? "/api/payments" : "/api/payments/" + r.endpoint));
        long[] before = stats();
        long measureStart = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupSeconds);
        long measureEnd = measureStart + TimeUnit.SECONDS.toNanos(measured);
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Worker w = new Worker(uri, r.workload, measureStart, measureEnd);
            workers.add(w);
            Thread t = new Thread(w, "load-" + i);
            w.thread = t;
            t.start();
        }
        // The CPU the server and the database spent in the measured window (Linux /proc), read beside the load.
        ProcessCpu cpu = serverPid > 0 ? new ProcessCpu(serverPid, databaseProcess) : null;
        ProcessCpu.Snapshot cpuAtStart = null;
        ProcessCpu.Snapshot cpuAtEnd = null;
        if (cpu != null) {
            sleepUntil(measureStart);
            cpuAtStart = cpu.ticks();
            sleepUntil(measureEnd);
            cpuAtEnd = cpu.ticks();
        }
        for (Worker w : workers) {
            w.thread.join();
        }
        long[] after = stats();
        long count = r.all.getTotalCount();
        for (Worker w : workers) {
            r.add(w);
        }
        if (measured == 0) {
            return;
        }
        r.sliceThroughputs.add((r.all.getTotalCount() - count) / (double) measured);
        r.seconds += measured;
        r.charges += after[0] - before[0];
        r.payments += after[1] - before[1];
        r.stats = after;
        if (cpu != null) {
            r.addTicks(cpu.ticksBetween(cpuAtStart, cpuAtEnd));
        }
    }

    /** An endpoint's line, its CPU per request, and the check of its charges. */
    void report(Result r) {
        System.out.println(r.line());
        if (r.ticks != null) {
            r.cpu = ProcessCpu.microsPerRequest(r.ticks, r.all.getTotalCount(), databaseProcess);
        }
        r.check();
    }

    /** Charges and payments from {@code GET /api/payments/stats}. */
    long[] stats() throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/api/payments/stats"))
                .timeout(Duration.ofSeconds(60)).GET();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> response = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("GET /api/payments/stats: " + response.statusCode() + " " + response.body());
        }
        long[] values = new long[2];
        Matcher m = STAT.matcher(response.body());
        while (m.find()) {
            values[m.group(1).equals("charges") ? 0 : 1] = Long.parseLong(m.group(2));
        }
        return values;
    }

    HttpRequest request(URI uri, String key) {
        // The reference is the key: the body is the same size in every workload, and a retry is the same body.
        String body = "{\"amount\":1250,\"currency\":\"EUR\",\"reference\":\"" + key + "\"}";
        HttpRequest.Builder b = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return b.build();
    }

    /** One request's outcome: status (or the exception), whether it was a replay, when it ended. */
    record Outcome(int status, boolean replayed, Throwable failure, String unexpected, long end) {

        static Outcome of(HttpResponse<byte[]> response) {
            int status = response.statusCode();
            // Anything but a success or a 409 (a duplicate while the first runs) is kept to be printed.
            String unexpected = status / 100 == 2 || status == 409 ? null
                    : status + " " + new String(response.body(), StandardCharsets.UTF_8);
            return new Outcome(status, response.headers().firstValue(REPLAYED).map("true"::equalsIgnoreCase).orElse(false),
                    null, unexpected, System.nanoTime());
        }

        static Outcome failed(Throwable failure) {
            return new Outcome(0, false, failure, failure.toString(), System.nanoTime());
        }

        String category() {
            if (failure != null) {
                Throwable t = failure.getCause() != null && failure instanceof java.util.concurrent.CompletionException
                        ? failure.getCause() : failure;
                return t.getClass().getSimpleName();
            }
            return status == 201 && replayed ? "201-replay" : String.valueOf(status);
        }
    }

    /** One closed-loop thread; its histograms and counts are its own, merged after the run. */
    final class Worker implements Runnable {
        final URI uri;
        final String workload;
        final long measureStart;
        final long measureEnd;
        Thread thread;

        final Histogram all = new Histogram(HIGHEST_MICROS, 3);
        final Histogram fresh = new Histogram(HIGHEST_MICROS, 3);
        final Histogram replays = new Histogram(HIGHEST_MICROS, 3);
        final Map<String, Long> measured = new TreeMap<>(); // status counts, measured requests only
        final Map<String, Long> total = new TreeMap<>();    // status counts, warm-up included
        long keysWith201;   // keys that got at least one 201 (warm-up included)
        long fresh201;      // 201s without Idempotent-Replayed (warm-up included)
        final List<String> errors = new ArrayList<>();
        final String[] known = new String[16]; // the retries workload's keys
        final java.util.Set<String> keysAnswered201 = new java.util.HashSet<>();
        int next;

        Worker(URI uri, String workload, long measureStart, long measureEnd) {
            this.uri = uri;
            this.workload = workload;
            this.measureStart = measureStart;
            this.measureEnd = measureEnd;
        }

        @Override
        public void run() {
            // A new key only while the measurement lasts; a started pair or burst is finished.
            for (int i = 0; i < known.length; i++) {
                known[i] = UUID.randomUUID().toString();
            }
            while (System.nanoTime() < measureEnd) {
                if (workload.equals("retries")) {
                    String k = known[next++ % known.length];
                    if (send(k) && keysAnswered201.add(k)) {
                        keysWith201++;
                    }
                    continue;
                }
                String key = UUID.randomUUID().toString();
                boolean got201 = false;
                switch (workload) {
                    case "unique" -> got201 = send(key);
                    case "retries50" -> {
                        got201 = send(key);
                        got201 |= send(key);
                    }
                    default -> got201 = burst(key);
                }
                if (got201) {
                    keysWith201++;
                }
            }
        }

        /** One blocking request; true if it got a 201. */
        boolean send(String key) {
            HttpRequest request = request(uri, key);
            long start = System.nanoTime();
            Outcome outcome;
            try {
                outcome = Outcome.of(client.send(request, HttpResponse.BodyHandlers.ofByteArray()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcome = Outcome.failed(e);
            } catch (IOException | RuntimeException e) {
                outcome = Outcome.failed(e);
            }
            return record(start, outcome);
        }

        /** {@code burst} concurrent requests with one key, all sent at once and joined; true if one got a 201. */
        boolean burst(String key) {
            List<CompletableFuture<Outcome>> inFlight = new ArrayList<>(burst);
            long start = System.nanoTime();
            for (int i = 0; i < burst; i++) {
                inFlight.add(client.sendAsync(request(uri, key), HttpResponse.BodyHandlers.ofByteArray())
                        .handle((response, failure) -> failure == null ? Outcome.of(response) : Outcome.failed(failure)));
            }
            boolean got201 = false;
            for (CompletableFuture<Outcome> f : inFlight) {
                got201 |= record(start, f.join());
            }
            return got201;
        }

        boolean record(long start, Outcome outcome) {
            String category = outcome.category();
            total.merge(category, 1L, Long::sum);
            if (outcome.unexpected != null && errors.size() < 3) {
                String u = outcome.unexpected;
                errors.add(u.length() > 300 ? u.substring(0, 300) + "..." : u);
            }
            if (outcome.status == 201 && !outcome.replayed) {
                fresh201++;
            }
            if (start >= measureStart && outcome.end <= measureEnd) {
                long micros = Math.min(HIGHEST_MICROS, Math.max(1, (outcome.end - start) / 1_000));
                all.recordValue(micros);
                if (outcome.status == 201) {
                    (outcome.replayed ? replays : fresh).recordValue(micros);
                }
                measured.merge(category, 1L, Long::sum);
            }
            return outcome.status == 201;
        }
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /**
     * The CPU time (user and system, in clock ticks of {@code /proc/<pid>/stat}) of the server's JVM and of the
     * database's processes: on a machine whose two cores the load driver, the server and the database share, the CPU a
     * request costs each of them is steadier than the throughput, and says which one a difference comes from.
     */
    static final class ProcessCpu {
        /** Linux's USER_HZ: 100 on every architecture the JDK runs on there ({@code getconf CLK_TCK}). */
        static final long TICKS_PER_SECOND = Long.parseLong(System.getProperty("clk.tck", "100"));
        final long serverPid;
        final String database;

        ProcessCpu(long serverPid, String database) {
            this.serverPid = serverPid;
            this.database = database;
        }

        /** The server's ticks, and each database process's. */
        record Snapshot(long server, Map<Long, Long> database) {
        }

        Snapshot ticks() throws IOException {
            Map<Long, Long> db = new HashMap<>();
            if (!database.equals("none")) {
                try (var dirs = java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/proc"), "[0-9]*")) {
                    for (var dir : dirs) {
                        String stat = stat(dir.resolve("stat"));
                        if (stat != null && stat.contains("(" + database + ")")) {
                            db.put(Long.parseLong(dir.getFileName().toString()), ticksOf(stat));
                        }
                    }
                }
            }
            String server = stat(java.nio.file.Path.of("/proc", Long.toString(serverPid), "stat"));
            if (server == null) {
                throw new IOException("no process " + serverPid);
            }
            return new Snapshot(ticksOf(server), db);
        }

        /**
         * {server, database} ticks between two snapshots. A database process that ended within the window (a pool
         * closing a connection) takes its ticks with it: the database's figure can only be low by them.
         */
        long[] ticksBetween(Snapshot start, Snapshot end) {
            long dbTicks = 0;
            for (Map.Entry<Long, Long> e : end.database().entrySet()) {
                dbTicks += e.getValue() - start.database().getOrDefault(e.getKey(), 0L);
            }
            return new long[] {end.server() - start.server(), dbTicks};
        }

        /** {server, database} microseconds of CPU per request, printed. */
        static double[] microsPerRequest(long[] ticks, long requests, String database) {
            double server = ticks[0] * 1e6 / TICKS_PER_SECOND / Math.max(1, requests);
            double db = ticks[1] * 1e6 / TICKS_PER_SECOND / Math.max(1, requests);
            System.out.printf(Locale.ROOT, "  CPU per request: server %.0f us%s%n", server,
                    database.equals("none") ? " (the database runs in it)" : String.format(Locale.ROOT, ", %s %.0f us", database, db));
            return new double[] {server, db};
        }

        private static String stat(java.nio.file.Path path) {
            try {
                return java.nio.file.Files.readString(path);
            } catch (IOException e) {
                return null; // gone
            }
        }

        /** utime + stime: fields 14 and 15, counted after the command's closing parenthesis. */
        private static long ticksOf(String stat) {
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        }
    }

    /** A run's merged numbers. */
    static final class Result {
        final String endpoint;
        final String workload;
        final Histogram all = new Histogram(HIGHEST_MICROS, 3);
        final Histogram fresh = new Histogram(HIGHEST_MICROS, 3);
        final Histogram replays = new Histogram(HIGHEST_MICROS, 3);
        final Map<String, Long> measured = new TreeMap<>();
        final Map<String, Long> total = new TreeMap<>();
        final List<String> errors = new ArrayList<>();
        long keysWith201;
        long fresh201;
        double throughput;
        int seconds;                // measured, over its slices
        final List<Double> sliceThroughputs = new ArrayList<>();
        long charges;               // the server's, over the slices (their warm-ups included)
        long payments;
        long[] stats;               // the server's counts after the last slice
        long[] ticks;               // {server, database} CPU ticks in the measured windows; null when not measured
        double[] cpu; // {server, database} microseconds per request; null when not measured

        Result(String endpoint, String workload) {
            this.endpoint = endpoint;
            this.workload = workload;
        }

        void add(Worker w) {
            all.add(w.all);
            fresh.add(w.fresh);
            replays.add(w.replays);
            w.measured.forEach((k, v) -> measured.merge(k, v, Long::sum));
            w.total.forEach((k, v) -> total.merge(k, v, Long::sum));
            keysWith201 += w.keysWith201;
            fresh201 += w.fresh201;
            w.errors.stream().limit(3 - errors.size()).forEach(errors::add);
        }

        void addTicks(long[] more) {
            ticks = ticks == null ? more.clone() : new long[] {ticks[0] + more[0], ticks[1] + more[1]};
        }

        String line() {
            throughput = all.getTotalCount() / (double) seconds;
            StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
                    "%-11s %-9s %8.1f req/s  p50 %7s  p99 %7s  p99.9 %7s ms  n=%d %s",
                    endpoint, workload, throughput, ms(all, 50), ms(all, 99), ms(all, 99.9), all.getTotalCount(), measured));
            if (workload.startsWith("retries")) {
                s.append(String.format(Locale.ROOT, "  fresh p50/p99 %s/%s ms  replay p50/p99 %s/%s ms",
                        ms(fresh, 50), ms(fresh, 99), ms(replays, 50), ms(replays, 99)));
            }
            if (sliceThroughputs.size() > 1) {
                s.append("\n  turns (req/s):");
                sliceThroughputs.forEach(t -> s.append(String.format(Locale.ROOT, " %.0f", t)));
            }
            return s.toString();
        }

        /**
         * The server's charges during the run (warm-up included) against what the client saw: protected,
         * one charge per key that got a 201, and no key answered fresh twice; unprotected, one per 201.
         */
        void check() {
            long created = total.getOrDefault("201", 0L) + total.getOrDefault("201-replay", 0L);
            boolean isProtected = !endpoint.equals("unprotected");
            long expected = isProtected ? keysWith201 : created;
            boolean ok = charges == expected && (!isProtected || fresh201 == keysWith201);
            System.out.printf(Locale.ROOT, "  stats: charges +%d (now %d), payments +%d (now %d); all requests %s;"
                    + " keys with a 201 %d, fresh 201s %d: %s%n",
                    charges, stats[0], payments, stats[1], total, keysWith201, fresh201,
                    ok ? "ok" : "MISMATCH: expected " + expected + " charges" + (isProtected
                            ? " (one per key with a 201) and as many fresh 201s as keys" : " (one per 201)"));
            for (String e : errors) {
                System.out.println("  unexpected (first ones): " + e);
            }
        }
    }

    /** A percentile in milliseconds, "-" when nothing was recorded. */
    static String ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? "-"
                : String.format(Locale.ROOT, "%.2f", h.getValueAtPercentile(percentile) / 1000.0);
    }

    /** Protected against unprotected, the targets. */
    static void compare(Result p, Result u) {
        System.out.printf(Locale.ROOT, "  %s/unprotected throughput: %.2fx", p.endpoint, p.throughput / u.throughput);
        if (p.workload.startsWith("retries")) {
            // Retries served at least as fast as the unprotected endpoint serves fresh requests.
            System.out.printf(Locale.ROOT, "; replay p50/p99 %s/%s ms (protected) vs p50/p99 %s/%s ms (unprotected)",
                    ms(p.replays, 50), ms(p.replays, 99), ms(u.all, 50), ms(u.all, 99));
        }
        System.out.println();
    }
}
