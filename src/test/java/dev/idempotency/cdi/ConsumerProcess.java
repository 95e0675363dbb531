package dev.idempotency.cdi;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A consumer in a JVM of its own, as the node tests drive it: what it said on its standard output, line by line, and
 * commands to it on its standard input. Killed with {@code process.destroyForcibly()} (SIGKILL).
 */
public final class ConsumerProcess {

    final String name;
    public final Process process;
    public final List<String> lines = new CopyOnWriteArrayList<>();
    final BlockingQueue<String> fresh = new LinkedBlockingQueue<>();

    ConsumerProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                    fresh.add(line);
                }
            } catch (IOException ended) {
                // the process is gone
            }
        }, "node-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    public void send(String command) throws IOException {
        process.getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    /** Waits, bounded, for a line that starts with the text. */
    public void await(String text) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        if (lines.stream().anyMatch(l -> l.startsWith(text))) {
            return;
        }
        while (System.nanoTime() < deadline) {
            String line = fresh.poll(200, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(text)) {
                return;
            }
            if (line == null && !process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + " before saying " + text);
            }
        }
        throw new AssertionError(name + " did not say " + text + " within 90 s; it said " + lines);
    }

    /**
     * Waits, bounded (30 s), until at least {@code count} of the lines it said match (what it says reaches this JVM
     * through a pipe, a moment after the broker saw it), and answers how many do.
     */
    public long awaitLines(java.util.function.Predicate<String> which, long count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long seen = lines.stream().filter(which).count();
        while (seen < count && System.nanoTime() < deadline) {
            Thread.sleep(50); // polling the lines read from its output
            seen = lines.stream().filter(which).count();
        }
        return seen;
    }

    /** The keys of the lines that start with the prefix ({@code <prefix><key> ...}). */
    public Set<String> said(String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length()).split(" ")[0])
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
