package dev.idempotency.cdi;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/**
 * The side of a consumer JVM that talks to its test ({@link ConsumerProcess}): lines on its standard output, commands on
 * its standard input ({@code HOLD <key>} makes the runs of that key wait until {@code RELEASE <key>}; {@code STOP}
 * closes the node).
 */
final class NodeCommands {

    /** The keys whose runs wait, and what releases them. */
    static final Map<String, CountDownLatch> HELD = new ConcurrentHashMap<>();

    private NodeCommands() {
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Waits here while the key is held (released by the test, or killed here). */
    static void holdIfAsked(String key) throws InterruptedException {
        CountDownLatch held = HELD.get(key);
        if (held != null) {
            held.await();
        }
    }

    /** Says {@code ready}, then serves the test's commands until it stops the node or goes away. */
    static void serve(String ready, AutoCloseable node) throws Exception {
        say(ready);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] command = line.trim().split(" ");
            switch (command[0]) {
                case "HOLD" -> HELD.put(command[1], new CountDownLatch(1));
                case "RELEASE" -> {
                    CountDownLatch held = HELD.remove(command[1]);
                    if (held != null) {
                        held.countDown();
                    }
                }
                case "STOP" -> {
                    node.close();
                    say("STOPPED");
                    System.exit(0);
                }
                default -> say("UNKNOWN " + line);
            }
        }
        // the test JVM is gone
        Runtime.getRuntime().halt(2);
    }
}
