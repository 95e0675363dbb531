package dev.idempotency.cluster;

import dev.idempotency.cluster.ClusterProcesses.Node;
import dev.idempotency.testing.InfinispanServers;
import dev.idempotency.testing.TestDatabase;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The scaling measurements of BENCHMARKS.md ("Scaling"), not a test: 1, 2 and 4 application nodes (JVMs of their own,
 * {@link ClusterNode}: the engine, the JPA store on the local PostgreSQL, Narayana) in each cache mode, each node
 * running a closed loop of {@code threads} threads, all nodes at once; first replays of finished keys, then first
 * requests of new keys (claim, a business row, completion: one transaction each). Run by {@code bench/scaling}.
 *
 * <p>Arguments (all optional): modes ({@code local,replicated,distributed,remote}), node counts ({@code 1,2,4}),
 * seconds per measurement (8), threads per node (2).
 */
public final class ScalingRun {

    static final String HOSTS = "127.0.0.1[7911],127.0.0.1[7912],127.0.0.1[7913],127.0.0.1[7914]";
    static final int KEYS = 256;
    static final Pattern RESULT = Pattern.compile("ops=(\\d+) meanNanos=(\\d+) p50Nanos=(\\d+) p99Nanos=(\\d+)");

    private ScalingRun() {
    }

    public static void main(String[] args) throws Exception {
        List<String> modes = List.of((args.length > 0 ? args[0] : "local,replicated,distributed,remote").split(","));
        List<Integer> sizes = new ArrayList<>();
        for (String n : (args.length > 1 ? args[1] : "1,2,4").split(",")) {
            sizes.add(Integer.parseInt(n));
        }
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        TestDatabase.POSTGRES.reset();
        try (Connection c = TestDatabase.POSTGRES.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS cluster_effect");
            s.execute("CREATE TABLE cluster_effect (idem_key VARCHAR(100) NOT NULL, node VARCHAR(100) NOT NULL)");
        }
        Map<String, String> kinds = Map.of("local", "local", "replicated", "replicated", "distributed", "distributed:2",
                "remote", "remote:");
        System.out.println("| cache mode | nodes | replays/s | replay mean µs | replay p99 µs | first requests/s | first mean µs | first p99 µs |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (String mode : modes) {
            InfinispanServers servers = null;
            String kind = kinds.get(mode);
            if (mode.equals("remote")) {
                servers = new InfinispanServers(2).start();
                kind = "remote:" + servers.serverList();
            }
            try {
                for (int n : sizes) {
                    System.out.println(measure(mode, kind, n, seconds, threads));
                }
            } finally {
                if (servers != null) {
                    servers.close();
                }
            }
        }
    }

    static String measure(String mode, String kind, int count, int seconds, int threads) throws Exception {
        try (ClusterProcesses processes = new ClusterProcesses()) {
            List<Node> nodes = new ArrayList<>();
            for (int i = 1; i <= count; i++) {
                nodes.add(processes.start("scale-" + i, 7910 + i, HOSTS, 30_000, List.of("-Didempotency.test.cache=" + kind, "-Didempotency.test.pool=" + Math.max(16, threads + 4))));
            }
            if (mode.equals("replicated") || mode.equals("distributed")) {
                processes.awaitMembers(count, nodes);
            }
            String keys = "finished-" + UUID.randomUUID().toString().substring(0, 8);
            for (int k = 0; k < KEYS; k++) {
                processes.get(nodes.get(0), "run?key=" + keys + "-" + k);
            }
            all(processes, nodes, "load?kind=replay&seconds=2&threads=" + threads + "&keys=" + keys + "&count=" + KEYS);
            long[] replay = all(processes, nodes, "load?kind=replay&seconds=" + seconds + "&threads=" + threads + "&keys=" + keys + "&count=" + KEYS);
            all(processes, nodes, "load?kind=new&seconds=2&threads=" + threads);
            long[] first = all(processes, nodes, "load?kind=new&seconds=" + seconds + "&threads=" + threads);
            return "| " + mode + " | " + count + " | " + replay[0] / seconds + " | " + micros(replay[1]) + " | " + micros(replay[2])
                    + " | " + first[0] / seconds + " | " + micros(first[1]) + " | " + micros(first[2]) + " |";
        }
    }

    static String micros(long nanos) {
        return nanos < 10_000 ? String.format(java.util.Locale.ROOT, "%.1f", nanos / 1000.0) : String.valueOf(nanos / 1000);
    }

    /** Runs the load on every node at once; returns the total operations, the mean (weighted) and the highest p99. */
    static long[] all(ClusterProcesses processes, List<Node> nodes, String path) throws Exception {
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (Node n : nodes) {
            answers.add(processes.getAsync(n, path));
        }
        long ops = 0;
        long weighted = 0;
        long p99 = 0;
        for (CompletableFuture<String> a : answers) {
            String answer = a.get();
            Matcher m = RESULT.matcher(answer);
            if (!m.find()) {
                throw new IllegalStateException(path + ": " + answer);
            }
            long n = Long.parseLong(m.group(1));
            ops += n;
            weighted += n * Long.parseLong(m.group(2));
            p99 = Math.max(p99, Long.parseLong(m.group(4)));
        }
        return new long[] {ops, ops == 0 ? 0 : weighted / ops, p99};
    }
}
