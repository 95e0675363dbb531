package dev.idempotency.health;

import dev.idempotency.spi.ScopedKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import dev.idempotency.runtime.IdempotencyRuntime;

/**
 * MicroProfile Health readiness ({@code idempotency}): the store answers a read within {@link #PROBE_BOUND} (a database
 * whose packets vanish leaves the read waiting for the store's statement bound; the check does not wait for it, and
 * starts no second read while the first still waits, unless the first has waited twice the bound: it is then given
 * up), and a clustered cache
 * sees at least {@code idempotency.health.min-members} members; a remote cache is reported (reachable or not) but
 * never takes the node out, since the store answers without it. Registered only when MicroProfile Health is
 * there.
 */
@Readiness
@ApplicationScoped
public class IdempotencyReadinessCheck implements HealthCheck {

    private static final ScopedKey PROBE = new ScopedKey("idempotency-health", "", "probe");

    @Inject
    IdempotencyRuntime runtime;

    @Inject
    dev.idempotency.core.IdempotencyEngine engine;

    /**
     * The reads' threads: the library's own, as the health runtime's thread was before (a server's managed executor
     * aborts a task submitted from a thread with no application component, as a health check's is on WildFly).
     */
    private final java.util.concurrent.ExecutorService reads = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "idempotency-readiness");
        t.setDaemon(true);
        return t;
    });

    @jakarta.annotation.PreDestroy
    void stop() {
        reads.shutdownNow();
    }

    /** How long the check waits for the store's read: readiness is DOWN within this of the database going silent. */
    static final java.time.Duration PROBE_BOUND = java.time.Duration.ofSeconds(4);

    /** The store's read under way or last done, and when it began ({@link System#nanoTime()}). */
    private java.util.concurrent.Future<?> probe;
    private long probeStarted;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder b = HealthCheckResponse.named("idempotency").up();
        String store = store();
        if (store == null) {
            b.withData("store", "UP");
        } else {
            b.down().withData("store", "DOWN: " + store);
        }
        var cache = runtime.recordCache();
        if (cache != null && cache.members() < 0) {
            // A cache elsewhere (an Infinispan Server): while it is unreachable the store answers (slower, still
            // exactly once), so this node stays ready.
            b.withData("cache", cache.reachable() ? "UP" : "UNREACHABLE: the store answers");
        } else if (cache != null) {
            int members = cache.members();
            b.withData("cache-members", members);
            if (members < runtime.settings().healthMinMembers()) {
                b.down().withData("cache", "DOWN: " + members + " of at least " + runtime.settings().healthMinMembers() + " members");
            }
        }
        return b.build();
    }

    /** {@code null} when the store answered its read within the bound; else why not. */
    public String store() {
        try {
            java.util.concurrent.Future<?> read;
            synchronized (this) {
                long now = System.nanoTime();
                // A read still waiting after twice the bound is given up (a connection with no bound of its own may
                // wait for ever): a new one starts, so that the check comes UP once the store answers again.
                if (probe == null || probe.isDone() || now - probeStarted > 2 * PROBE_BOUND.toNanos()) {
                    if (probe != null && !probe.isDone()) {
                        probe.cancel(true);
                    }
                    probe = reads.submit(() -> engine.store().find(PROBE));
                    probeStarted = now;
                }
                read = probe;
            }
            read.get(PROBE_BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return null;
        } catch (java.util.concurrent.TimeoutException e) {
            return "no answer within " + PROBE_BOUND.toSeconds() + " s";
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (java.util.concurrent.CancellationException e) {
            return "the read was given up";
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return "the application is stopping";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
