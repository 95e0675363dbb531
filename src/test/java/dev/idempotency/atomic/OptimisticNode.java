package dev.idempotency.atomic;

import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.core.AtomicOutcome;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.testing.JtaEnvironment;
import dev.idempotency.testing.TestDatabase;

import org.infinispan.manager.EmbeddedCacheManager;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;

/**
 * The other JVM of {@link OptimisticClaimContract}: an engine with a local cache of its own (cache.mode=local), on the
 * same database. Arguments: JDBC URL, user, password, mode, keys.
 * <ul>
 * <li>{@code crash}: runs the key optimistically, writes its business row, says {@value #WROTE}, and never commits.</li>
 * <li>{@code race}: for each key (comma-separated), runs it optimistically; its work writes the business row, says
 *     {@value #RUNNING}{@code key}, and returns once told {@value #GO}{@code key} on standard input; then says
 *     {@value #ANSWER}{@code key answer}.</li>
 * </ul>
 */
public final class OptimisticNode {

    static final String WROTE = "WROTE-BUSINESS-ROW";
    static final String RUNNING = "RUNNING ";
    static final String GO = "GO ";
    static final String ANSWER = "ANSWER ";

    private OptimisticNode() {
    }

    public static void main(String[] args) throws Exception {
        JtaEnvironment env = new JtaEnvironment(args[0], args[1], args[2], Map.of(), 4, false);
        EmbeddedCacheManager manager = CacheManagers.start(false, "optimistic", "other-jvm", null, "127.0.0.1", 0, "127.0.0.1[0]", 1000);
        LocalCompletionSignals signals = new LocalCompletionSignals();
        IdempotencyEngine engine = new IdempotencyEngine(env.store, Clock.systemUTC(), "other-jvm", env.bridge(), signals,
                Executors.newCachedThreadPool(), Duration.ofSeconds(30),
                new InfinispanRecordCache(CacheManagers.defineCache(manager, 1000), Clock.systemUTC(), signals));
        String key = args[4];
        if (args[3].equals("crash")) {
            OptimisticClaimContract.call(engine, key, OptimisticClaimContract.WAIT, () -> {
                String receipt = AtomicClaimContract.charge(env.dataSource, key, 1_000_001);
                say(WROTE);
                new CountDownLatch(1).await(); // killed here, before the commit
                return receipt;
            });
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int execution = 1_000_000;
        for (String k : key.split(",")) {
            int n = ++execution;
            AtomicOutcome<String> outcome = OptimisticClaimContract.call(engine, k, OptimisticClaimContract.WAIT, () -> {
                String receipt = AtomicClaimContract.charge(env.dataSource, k, n);
                say(RUNNING + k);
                awaitLine(in, GO + k);
                return receipt + "-there";
            });
            say(ANSWER + k + " " + OptimisticClaimContract.text(outcome));
        }
        manager.stop();
        env.close();
        System.exit(0);
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Reads lines until one starts with {@code prefix}, and returns it; fails at the end of the stream. */
    static String awaitLine(BufferedReader in, String prefix) throws IOException {
        StringBuilder seen = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("never said \"" + prefix + "\"; it said:\n" + seen);
    }

    static Process start(String url, TestDatabase db, String mode, String keys) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(OptimisticClaimContract.java().toString(), "-Xmx256m",
                "-DObjectStoreEnvironmentBean.objectStoreDir=target/narayana-optimistic",
                "-Dcom.arjuna.ats.arjuna.objectstore.objectStoreDir=target/narayana-optimistic",
                "-cp", System.getProperty("java.class.path"), OptimisticNode.class.getName(),
                url, db.user, db.password, mode, keys);
        pb.redirectErrorStream(true);
        return pb.start();
    }
}
